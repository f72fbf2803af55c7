package configcmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/nvconf"
)

// printDeviceHeader prints the lines mlxconfig users look for first
// (Device type, Name, Description, Device), then the firmware.
func (cc *configCtx) printDeviceHeader(t *nvTarget) {
	w := cc.a.Stdout
	ctx := cc.a.Ctx
	id, _ := t.ad.Identity(ctx)
	if id == nil {
		id = &adapter.Identity{}
	}
	desc, _ := t.ad.Description(ctx)
	// mlxconfig writes the type without the dash: ConnectX7.
	fmt.Fprintf(w, "Device type:  %s\n", cmdutil.Dash(strings.ReplaceAll(id.Model, "-", "")))
	fmt.Fprintf(w, "Name:         %s\n", cmdutil.Dash(id.PartNumber))
	fmt.Fprintf(w, "Description:  %s\n", cmdutil.Dash(desc))
	fmt.Fprintf(w, "Device:       %s\n", cmdutil.Describe(t.ad))
	fmt.Fprintf(w, "Firmware:     %s\n", cmdutil.Dash(id.Firmware))
}

type valueJSON struct {
	Text      string  `json:"text"`
	Raw       *uint64 `json:"raw,omitempty"`
	Defaulted bool    `json:"defaulted,omitempty"`
}

func toValueJSON(v *nvconf.Value) *valueJSON {
	if v == nil {
		return nil
	}
	out := &valueJSON{Text: v.Text, Defaulted: v.Defaulted}
	if v.Numeric {
		r := v.Raw
		out.Raw = &r
	}
	return out
}

type settingJSON struct {
	Name     string     `json:"name"`
	TLV      string     `json:"tlv"`
	Instance string     `json:"instance"`
	Type     string     `json:"type"`
	Next     *valueJSON `json:"next"`
	Default  *valueJSON `json:"default,omitempty"`
	Current  *valueJSON `json:"current,omitempty"`
	Modified bool       `json:"modified"`
	Pending  bool       `json:"pending"`
	Hidden   string     `json:"hidden,omitempty"`
}

// queryOptions are config query's flags.
type queryOptions struct {
	df            cmdutil.DeviceFlags
	extended, all bool
	filter, from  string
}

func (cc *configCtx) queryCmd() *cobra.Command { return cc.newQueryCmd(nil) }

// newQueryCmd wires the flags to queryOptions; runF (tests) replaces runQuery.
func (cc *configCtx) newQueryCmd(runF func(*queryOptions, []string) error) *cobra.Command {
	var o queryOptions
	c := &cobra.Command{
		Use:     "query [PARAM...]",
		Aliases: []string{"q"},
		Short:   "Show the NV configuration: Next Boot, and with -e Default and Current",
		Long: `Show every parameter the device supports (or the ones named): its Next Boot
value, and with -e its Default (factory) and Current (running) values. A *
marks a parameter whose Next Boot value differs from Current: it takes effect
at the next firmware reset. A + marks one that differs from the default.

Per-port parameters are NAME_P1, NAME_P2 ...; enum values show as NAME(n).
Parameters the firmware's TLV version is too old for, or whose dependency on
the device's capabilities does not hold, are not listed (--all lists them with
the reason), as mstconfig does.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runQuery(cc.a.Ctx, args, &o)
		},
	}
	o.df.Add(c)
	c.Flags().BoolVarP(&o.extended, "extended", "e", false, "also show Default and Current values")
	c.Flags().StringVar(&o.from, "from", "", "read the configuration from a file instead of a device: an mlxconfig/mstconfig query output (WinMFT's too), an mstconfig or cxray backup ('-': standard input)")
	c.Flags().StringVar(&cc.fileDevice, "file-device", "", "with --from, the device of a query output that holds several (its number from 1, or its Device name); without it such a file is refused with its list")
	c.Flags().BoolVar(&o.all, "all", false, "also list parameters mstconfig hides (unmet dependency, old TLV version), with the reason")
	c.Flags().StringVar(&o.filter, "filter", "", "only parameters (or TLVs) matching this regular expression (case-insensitive)")
	return c
}

// queryDoc is query -o json (docs/config.md).
type queryDoc struct {
	Device      string        `json:"device"`
	DeviceType  string        `json:"device_type,omitempty"`
	Name        string        `json:"name,omitempty"`
	Description string        `json:"description,omitempty"`
	NVDB        string        `json:"nvdb"`
	ReadDefault bool          `json:"read_default"`
	ReadCurrent bool          `json:"read_current"`
	Parameters  []settingJSON `json:"parameters"`
	Pending     []string      `json:"pending"`
	Unsupported []string      `json:"unsupported,omitempty"`
	Notes       []string      `json:"notes,omitempty"`
	// Interrupted is a write the journal shows was cut short.
	Interrupted *interruptedJSON `json:"interrupted_write,omitempty"`
}

func (cc *configCtx) printQuery(t *nvTarget, res *nvconf.QueryResult, extended bool) error {
	a := cc.a
	var pending []nvconf.Setting
	for _, s := range res.Settings {
		if s.Pending {
			pending = append(pending, s)
		}
	}
	if a.JSON() {
		out := queryDoc{Device: t.ad.Name(), NVDB: t.nv.Source, ReadDefault: res.ReadDefault, ReadCurrent: res.ReadCurrent,
			Parameters: []settingJSON{}, Pending: []string{}, Unsupported: res.Unsupported, Notes: t.s.Notes}
		if id, _ := t.ad.Identity(a.Ctx); id != nil {
			out.DeviceType, out.Name = strings.ReplaceAll(id.Model, "-", ""), id.PartNumber
		}
		out.Description, _ = t.ad.Description(a.Ctx)
		for _, s := range res.Settings {
			j := settingJSON{Name: s.Name, TLV: s.TLV, Instance: s.Instance, Type: s.Ref.Param.Type.String(), Next: toValueJSON(s.Next),
				Modified: s.Modified, Pending: s.Pending, Hidden: s.Hidden}
			if extended {
				j.Default, j.Current = toValueJSON(s.Default), toValueJSON(s.Current)
			}
			out.Parameters = append(out.Parameters, j)
		}
		for _, s := range pending {
			out.Pending = append(out.Pending, s.Name)
		}
		out.Interrupted = toInterruptedJSON(t.interrupted)
		return a.WriteJSON(out)
	}
	w := a.Stdout
	cc.printDeviceHeader(t)
	fmt.Fprintf(w, "Parameters:   %s (%d TLVs)\n", t.nv.Source, len(t.nv.TLVs))
	for _, n := range t.s.Notes {
		fmt.Fprintf(w, "Note:        %s\n", n)
	}
	if t.interrupted != nil {
		fmt.Fprintf(w, "Interrupted: %v\n", t.interrupted)
	}
	if len(res.Settings) == 0 {
		fmt.Fprintln(w, "No parameters to show.")
	} else {
		hdr := []string{"", "PARAMETER"}
		if extended {
			hdr = append(hdr, "DEFAULT", "CURRENT")
		}
		hdr = append(hdr, "NEXT BOOT")
		tb := a.NewTable(hdr...)
		for _, s := range res.Settings {
			mark := ""
			if s.Pending {
				mark += "*"
			}
			if s.Modified {
				mark += "+"
			}
			row := []string{mark, s.Name}
			if extended {
				row = append(row, valText(s.Default), valText(s.Current))
			}
			row = append(row, valText(s.Next))
			if s.Hidden != "" {
				row = append(row, "(hidden: "+s.Hidden+")")
			}
			tb.Row(row...)
		}
		tb.Flush()
	}
	for _, u := range res.Unsupported {
		fmt.Fprintf(w, "Not supported by this firmware: %s\n", u)
	}
	if extended && !res.ReadDefault {
		fmt.Fprintln(w, "The firmware cannot read default values (MNVGC): DEFAULT shows N/A.")
	}
	if !res.ReadCurrent {
		fmt.Fprintln(w, "The firmware cannot read current values (MNVGC): what is pending cannot be told.")
		return nil
	}
	if len(pending) == 0 {
		fmt.Fprintln(w, "Nothing pending: the running firmware uses the Next Boot values.")
		return nil
	}
	var parts []string
	for _, s := range pending {
		parts = append(parts, fmt.Sprintf("%s %s -> %s", s.Name, valText(s.Current), valText(s.Next)))
	}
	fmt.Fprintf(w, "* %d pending until the next firmware reset: %s.\n", len(pending), strings.Join(parts, ", "))
	// A reset armed for the next reboot (config apply --at-reboot) is
	// not to be applied again: say so where MFRL tells (reset_state).
	rc, err := t.s.FirmwareResetCaps(a.Ctx)
	switch {
	case err == nil && rc.Armed():
		fmt.Fprintln(w, "  A firmware reset is armed (MFRL reset_state Waiting_For_Reset_Trigger): they take effect at the next reboot.")
	case err == nil && rc.State == "":
		fmt.Fprintf(w, "  Apply now with 'cxray config apply -d %s' (MFRL) where the firmware allows it, or reboot (some parameters need a power cycle); if a reset is already armed ('config apply --at-reboot'), the next reboot applies them (this database, %s, cannot read MFRL reset_state to tell).\n", t.ad.Name(), t.ad.DB().Revision)
	default:
		fmt.Fprintf(w, "  Apply now with 'cxray config apply -d %s' (MFRL) where the firmware allows it, or reboot (some parameters need a power cycle).\n", t.ad.Name())
	}
	return nil
}

func valText(v *nvconf.Value) string {
	if v == nil {
		return "N/A"
	}
	return v.Text
}

// interruptedJSON is an interrupted write in query -o json.
type interruptedJSON struct {
	Op      string   `json:"op"`
	Started string   `json:"started"`
	TLVs    []string `json:"tlvs"`
	Backup  string   `json:"backup"`
	Message string   `json:"message"`
}

func toInterruptedJSON(ie *nvconf.InterruptedError) *interruptedJSON {
	if ie == nil {
		return nil
	}
	return &interruptedJSON{Op: ie.Entry.Op, Started: ie.Entry.Started.Format(time.RFC3339), TLVs: nonNilStr(ie.Names),
		Backup: ie.Entry.Backup, Message: ie.Error()}
}

// runQuery shows the NV configuration of a device, or of a file with --from.
func (cc *configCtx) runQuery(ctx context.Context, args []string, o *queryOptions) error {
	re, err := cmdutil.CompileFilter(o.filter)
	if err != nil {
		return err
	}
	if o.from != "" {
		if o.df.Name != "" || len(args) > 0 || o.filter != "" {
			return cmdutil.UsageErr("--from reads the whole file; leave out -d, parameter names and --filter")
		}
		return cc.queryFromFile(o.from, o.extended)
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	t, err := cc.openQuery(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	// Current is read even without -e, so pending changes can be named.
	res, err := t.s.Query(ctx, nvconf.QueryOptions{Names: args, Filter: re, Extended: true, All: o.all})
	if err != nil {
		return cmdutil.Classify(err)
	}
	return cc.printQuery(t, res, o.extended)
}
