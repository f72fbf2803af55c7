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
	"github.com/cxray/cxray/nvconf/tlv"
	"github.com/cxray/cxray/prm"
)

// readTextFile reads an NV configuration file (or standard input for "-").
// settingsDiffDoc is `config diff -o json` when a side is a query output
// or a device: the settings compared by parameter.
type settingsDiffDoc struct {
	A       string                 `json:"a"`
	B       string                 `json:"b"`
	By      string                 `json:"by"`
	Changes []nvconf.SettingChange `json:"changes"`
	OnlyInA []string               `json:"only_in_a"`
	OnlyInB []string               `json:"only_in_b"`
	Same    bool                   `json:"same"`
}

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
	hc, err := tlv.NewHeaderCodec(db, "MNVDA")
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

// fileQueryDoc is query --from FILE -o json: a pasted or saved query
// read back.
type fileQueryDoc struct {
	File       string        `json:"file"`
	Kind       string        `json:"kind"`
	Device     string        `json:"device,omitempty"`
	Unchecked  bool          `json:"unchecked,omitempty"`
	Parameters []settingJSON `json:"parameters"`
	Pending    []string      `json:"pending"`
	Notes      []string      `json:"notes,omitempty"`
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
		out := fileQueryDoc{File: path, Kind: cf.Kind, Unchecked: cf.Unchecked, Parameters: []settingJSON{}, Pending: []string{}, Notes: cf.Notes}
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
			if s.Pending {
				out.Pending = append(out.Pending, s.Name)
			}
		}
		return a.WriteJSON(out)
	}
	w := a.Stdout
	fmt.Fprintf(w, "File:         %s (%s)\n", path, cf.Kind)
	if len(cf.Devices) > 0 && cf.Devices[0].Device != "" {
		fmt.Fprintf(w, "Device:       %s\n", cf.Devices[0].Device)
	}
	// The marks and the pending line are query's (printQuery): * pending
	// until the next firmware reset, + not the default.
	cols := []string{"", "PARAMETER", "NEXT BOOT"}
	wide := res.Extended
	if wide {
		cols = []string{"", "PARAMETER", "DEFAULT", "CURRENT", "NEXT BOOT"}
	}
	t := a.NewTable(cols...)
	text := func(v *nvconf.Value) string {
		if v == nil {
			return "-"
		}
		return v.Text
	}
	var pending []string
	for _, s := range res.Settings {
		mark := ""
		if s.Pending {
			mark += "*"
			pending = append(pending, fmt.Sprintf("%s %s -> %s", s.Name, text(s.Current), text(s.Next)))
		}
		if s.Modified {
			mark += "+"
		}
		if wide {
			t.Row(mark, s.Name, text(s.Default), text(s.Current), text(s.Next))
		} else {
			t.Row(mark, s.Name, text(s.Next))
		}
	}
	t.Flush()
	switch {
	case !wide && cf.Kind == "query":
		fmt.Fprintln(w, "The file has no Current column (a query without -e): what is pending cannot be told.")
	case !wide:
		fmt.Fprintln(w, "A backup holds the stored (Next Boot) values only: what is pending cannot be told.")
	case len(pending) == 0:
		fmt.Fprintln(w, "Nothing pending: the firmware ran the Next Boot values when the file was taken.")
	default:
		dev := "DEV"
		if len(cf.Devices) > 0 && cf.Devices[0].Device != "" {
			dev = cf.Devices[0].Device
		}
		fmt.Fprintf(w, "* %d pending until the next firmware reset: %s.\n", len(pending), strings.Join(pending, ", "))
		fmt.Fprintf(w, "  Apply on the device with 'cxray config apply -d %s' (MFRL) where the firmware allows it, or reboot (some parameters need a power cycle).\n", dev)
	}
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
// one side is a query output, which holds values, not TLVs). A query
// output often lists a few parameters (mlxconfig q without -e, a pasted
// fragment): by default the parameters both sides hold are compared and
// the rest are named in a footer (all: listed as rows too). Only a
// difference both sides hold is a problem (exit 1).
func (cc *configCtx) diffSettings(ctx context.Context, ops []operand, db *prm.DB, all bool) error {
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
	var changes []nvconf.SettingChange
	only := map[string][]string{}
	differ := 0
	for _, c := range nvconf.CompareSettings(sides[0], sides[1]) {
		if c.Only == "" {
			differ++
		} else if c.Column == "Next Boot" {
			only[c.Only] = append(only[c.Only], c.Name)
		}
		if c.Only == "" || all {
			changes = append(changes, c)
		}
	}
	if a.JSON() {
		doc := settingsDiffDoc{A: args[0], B: args[1], Same: differ == 0, By: "parameter", Changes: changes,
			OnlyInA: nonNil(only["a"]), OnlyInB: nonNil(only["b"])}
		if err := a.WriteJSON(doc); err != nil {
			return err
		}
	} else {
		if differ == 0 {
			fmt.Fprintf(a.Stdout, "%s and %s hold the same values", args[0], args[1])
			if len(only["a"])+len(only["b"]) > 0 {
				fmt.Fprint(a.Stdout, " where both have the parameter")
			}
			fmt.Fprintln(a.Stdout)
		}
		if len(changes) > 0 {
			t := a.NewTable("PARAMETER", "COLUMN", args[0], args[1])
			for _, c := range changes {
				// "-" is absent; a 0 stays a 0.
				t.Row(c.Name, c.Column, absent(c.Old), absent(c.New))
			}
			t.Flush()
		}
		if !all {
			for i, side := range []string{"a", "b"} {
				if n := len(only[side]); n > 0 {
					names := only[side]
					if n > 8 {
						names = append(names[:8:8], fmt.Sprintf("and %d more", n-8))
					}
					fmt.Fprintf(a.Stdout, "only in %s: %d parameter(s): %s (--all lists their values)\n", args[i], n, strings.Join(names, ", "))
				}
			}
		}
	}
	if differ > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

// absent renders a value of a settings diff: "-" only when the side lacks
// the parameter.
func absent(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
