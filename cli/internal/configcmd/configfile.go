package configcmd

// NV configuration from files people bring instead of a device: mlxconfig
// or mstconfig query outputs (WinMFT included), mstconfig backups and
// cxray's own backups (nvconf.ReadConfigFile).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/prm"
)

// readTextFile reads an NV configuration file (or standard input for "-").
func readTextFile(path string, stdin io.Reader) (string, error) {
	b, err := cmdutil.ReadInput(path, stdin, nvconf.MaxFileSize, "an NV configuration file")
	return string(b), err
}

// readBackup reads a backup in any format, with whether it proves itself
// whole (BackupFile.Unchecked).
func readBackup(path string, hc *nvconf.HeaderCodec, nv *nvconf.DB, stdin io.Reader) (*nvconf.BackupFile, error) {
	text, err := readTextFile(path, stdin)
	if err != nil {
		return nil, err
	}
	return parseBackup(path, text, hc, nv)
}

// parseBackup reads the text of a backup that path names.
func parseBackup(path, text string, hc *nvconf.HeaderCodec, nv *nvconf.DB) (*nvconf.BackupFile, error) {
	if nvconf.IsQueryText(text) {
		return nil, cmdutil.UsageErr("%s is a query output (mlxconfig/mstconfig q), not a backup: it holds values, not the TLVs to write; set them with 'cxray config set', or compare with 'cxray config diff'", path)
	}
	b, err := nvconf.ReadBackupFile(text, hc, nv)
	if err != nil {
		return nil, cmdutil.UsageErr("%s: %v", path, err)
	}
	return b, nil
}

// readConfigFile reads any configuration file as settings.
func (cc *configCtx) readConfigFile(path string) (*nvconf.ConfigFile, error) {
	text, err := readTextFile(path, cc.a.Stdin)
	if err != nil {
		return nil, err
	}
	return cc.parseConfigFile(path, text)
}

// parseConfigFile reads the text of a configuration file that path names.
func (cc *configCtx) parseConfigFile(path, text string) (*nvconf.ConfigFile, error) {
	nv, err := cc.db()
	if err != nil {
		return nil, err
	}
	db, err := cc.a.DB()
	if err != nil {
		return nil, err
	}
	hc, err := nvconf.NewHeaderCodec(db, "MNVDA")
	if err != nil {
		return nil, cmdutil.UsageWrap(err)
	}
	cf, err := nvconf.ReadConfigFileDevice(text, nv, hc, cc.fileDevice)
	var me *nvconf.MultiDeviceError
	switch {
	case errors.As(err, &me):
		return nil, cmdutil.UsageErr("%s: %v with --file-device N", path, err)
	case err != nil && cc.fileDevice != "" && nvconf.IsQueryText(text):
		return nil, cmdutil.UsageErr("%s: %v", path, err)
	case err != nil:
		return nil, cmdutil.UsageErr("%s: %v; give an mlxconfig/mstconfig query output (q or -e q), an mstconfig backup or a cxray backup", path, err)
	}
	return cf, nil
}

// queryFromFile is `config query --from FILE`.
func (cc *configCtx) queryFromFile(path string, extended bool) error {
	a := cc.a
	cf, err := cc.readConfigFile(path)
	if err != nil {
		return err
	}
	res := cf.Result
	if a.JSON() {
		out := struct {
			File       string        `json:"file"`
			Kind       string        `json:"kind"`
			Device     string        `json:"device,omitempty"`
			Unchecked  bool          `json:"unchecked,omitempty"`
			Parameters []settingJSON `json:"parameters"`
			Notes      []string      `json:"notes,omitempty"`
		}{File: path, Kind: cf.Kind, Unchecked: cf.Unchecked, Parameters: []settingJSON{}, Notes: cf.Notes}
		if len(cf.Devices) > 0 {
			out.Device = cf.Devices[0].Device
		}
		for _, s := range res.Settings {
			j := settingJSON{Name: s.Name, TLV: s.TLV, Instance: s.Instance, Type: s.Ref.Param.Type.String(), Next: toValueJSON(s.Next),
				Modified: s.Modified, Pending: s.Pending}
			if extended || res.Extended {
				j.Default, j.Current = toValueJSON(s.Default), toValueJSON(s.Current)
			}
			out.Parameters = append(out.Parameters, j)
		}
		return a.WriteJSON(out)
	}
	w := a.Stdout
	fmt.Fprintf(w, "File:         %s (%s)\n", path, cf.Kind)
	if len(cf.Devices) > 0 && cf.Devices[0].Device != "" {
		fmt.Fprintf(w, "Device:       %s\n", cf.Devices[0].Device)
	}
	cols := []string{"PARAMETER", "NEXT BOOT"}
	wide := res.Extended
	if wide {
		cols = []string{"PARAMETER", "DEFAULT", "CURRENT", "NEXT BOOT"}
	}
	t := a.NewTable(cols...)
	text := func(v *nvconf.Value) string {
		if v == nil {
			return "-"
		}
		return v.Text
	}
	for _, s := range res.Settings {
		if wide {
			t.Row(s.Name, text(s.Default), text(s.Current), text(s.Next))
		} else {
			t.Row(s.Name, text(s.Next))
		}
	}
	t.Flush()
	for _, n := range cf.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if cf.Unchecked {
		fmt.Fprintln(w, "note: this file carries no count or checksum: nothing proves it is whole")
	}
	return nil
}

// operand is one side of config diff: a file (or standard input), read
// once, or a device name.
type operand struct {
	arg  string
	file bool
	text string
}

// readOperands reads the operands of config diff that are files: an
// existing file wins over a device of the same name.
func (cc *configCtx) readOperands(args []string) ([]operand, error) {
	ops := make([]operand, len(args))
	stdin := 0
	for i, arg := range args {
		ops[i].arg = arg
		if fi, err := os.Stat(arg); (err != nil || fi.IsDir()) && arg != "-" {
			continue
		}
		if arg == "-" {
			if stdin++; stdin > 1 {
				return nil, cmdutil.UsageErr("standard input (-) can be one side of the diff, not both; save one side to a file")
			}
		}
		text, err := readTextFile(arg, cc.a.Stdin)
		if err != nil {
			return nil, err
		}
		ops[i].file, ops[i].text = true, text
	}
	return ops, nil
}

// holdsQuery says an operand is a query output (values, not TLVs).
// A text that starts with neither backup's signature is read as a query
// output too: a `| grep` fragment has no heading.
func (op operand) holdsQuery() bool {
	if !op.file {
		return false
	}
	first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(op.text, "\ufeff \t\r\n"), "\n", 2)[0])
	return nvconf.IsQueryText(op.text) || (first != nvconf.RawFileSignature && !strings.HasPrefix(first, nvconf.BackupSignature))
}

// settingsSide is one operand of a settings diff: a file or a device.
func (cc *configCtx) settingsSide(ctx context.Context, op operand, db *prm.DB) (*nvconf.QueryResult, error) {
	if op.file {
		cf, err := cc.parseConfigFile(op.arg, op.text)
		if err != nil {
			return nil, err
		}
		return cf.Result, nil
	}
	arg := op.arg
	df := cmdutil.DeviceFlags{Name: arg}
	t, err := cc.open(ctx, df)
	if err != nil {
		return nil, fmt.Errorf("%s is neither a file nor a device: %w", arg, err)
	}
	defer t.Close()
	res, err := t.s.Query(ctx, nvconf.QueryOptions{Extended: true})
	if err != nil {
		return nil, cmdutil.Classify(err)
	}
	return res, nil
}

// diffSettings compares two configurations parameter by parameter (when
// one side is a query output, which holds values, not TLVs).
func (cc *configCtx) diffSettings(ctx context.Context, ops []operand, db *prm.DB) error {
	a := cc.a
	args := []string{ops[0].arg, ops[1].arg}
	var sides [2]*nvconf.QueryResult
	for i, op := range ops {
		r, err := cc.settingsSide(ctx, op, db)
		if err != nil {
			return err
		}
		sides[i] = r
	}
	changes := nvconf.CompareSettings(sides[0], sides[1])
	if a.JSON() {
		if err := a.WriteJSON(map[string]any{"a": args[0], "b": args[1], "same": len(changes) == 0, "by": "parameter", "changes": changes}); err != nil {
			return err
		}
	} else if len(changes) == 0 {
		fmt.Fprintf(a.Stdout, "%s and %s hold the same values\n", args[0], args[1])
	} else {
		t := a.NewTable("PARAMETER", "COLUMN", args[0], args[1])
		for _, c := range changes {
			t.Row(c.Name, c.Column, cmdutil.Dash(c.Old), cmdutil.Dash(c.New))
		}
		t.Flush()
	}
	if len(changes) > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}
