package regcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/hexdump"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/units"
)

func (a *app) regCmd() *cobra.Command { return a.newRegCmd(nil) }

// newRegCmd wires mlxreg's flags to mlxregFlags; runF (tests) replaces
// runMlxreg. Without one of those flags the command prints its help.
func (a *app) newRegCmd(runF func(*mlxregFlags, []string) error) *cobra.Command {
	c := &cobra.Command{
		Use:   "reg",
		Short: "Read and write access registers on a device",
		Long: `Read and write PRM access registers by name, decoded: enum names, text,
joined values. Index fields with one obvious value (local_port=1, pnat=0,
lp_msb=0, slot_index=0, swid=0, port_type=0) are filled in and reported;
the others must be given with --index.

mlxreg's flags work too (--reg_name, --reg_id/--reg_len, --get, --set,
--indexes, --op, --show_reg, --show_regs, --yes): the cxray command they
mean runs, and is printed.`,
		Example: `  cxray reg get PAOS -d emu --index local_port=1
  cxray reg -d emu --reg_name PAOS --get --indexes "local_port=1"   # as with mlxreg`,
		Args: cobra.NoArgs,
	}
	var mf mlxregFlags
	mf.add(c)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if !mf.used() {
			return cmd.Help()
		}
		if runF != nil {
			return runF(&mf, args)
		}
		return a.runMlxreg(a.Ctx, &mf)
	}
	c.AddCommand(a.regListCmd(), a.regGetCmd(), a.regSetCmd())
	return c
}

func parseKV(list []string, flag string) ([]prm.Assignment, error) {
	var all []string
	for _, l := range list {
		all = append(all, strings.Split(l, ",")...)
	}
	as, err := prm.ParseAssignments(all)
	if err != nil {
		return nil, cmdutil.UsageErr("%s: %v", flag, err)
	}
	return as, nil
}

// ---- list

// regListOptions is what `cxray reg list` was asked.
type regListOptions struct {
	df     cmdutil.DeviceFlags
	filter string
}

func (a *app) regListCmd() *cobra.Command { return a.newRegListCmd(nil) }

// newRegListCmd wires the flags to regListOptions; runF (tests) replaces runRegList.
func (a *app) newRegListCmd(runF func(*regListOptions, []string) error) *cobra.Command {
	o := &regListOptions{}
	c := &cobra.Command{
		Use:   "list",
		Short: "List registers; with -d, which the device's firmware supports",
		Long: `List the registers of the database. With -d, read the capability registers
(MCAM, PCAM, QCAM) and say for each register whether the firmware advertises it
(yes), does not (no), or the capability masks do not cover it (-).`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runRegList(a.Ctx, o)
		},
	}
	o.df.Add(c)
	c.Flags().StringVar(&o.filter, "filter", "", "only names matching this regular expression")
	return c
}

// runRegList is `cxray reg list`: the database's registers, and with -d
// whether the firmware advertises each.
func (a *app) runRegList(ctx context.Context, o *regListOptions) error {
	re, err := cmdutil.CompileFilter(o.filter)
	if err != nil {
		return err
	}
	db, err := a.DB()
	if err != nil {
		return err
	}
	var caps dev.Capabilities
	if o.df.Name != "" {
		ctx, cancel := o.df.Context(ctx)
		defer cancel()
		ad, d, err := a.OpenRegisters(ctx, o.df.Name, db)
		if err != nil {
			return err
		}
		defer ad.Close()
		if caps, err = d.Capabilities(ctx); err != nil {
			return cmdutil.Classify(err)
		}
	}
	items := []listItem{}
	for _, r := range db.Registers {
		if re != nil && !re.MatchString(r.Name) {
			continue
		}
		it := listItem{Name: r.Name, ID: r.ID, SizeBytes: r.Size}
		if s, ok := caps.Supports(r.ID); ok {
			it.Supported = &s
		}
		items = append(items, it)
	}
	if a.JSON() {
		return a.WriteJSON(listDocument{Device: o.df.Name, Registers: items, SourceRevision: db.Revision})
	}
	hdr := []string{"NAME", "ID", "SIZE"}
	if o.df.Name != "" {
		hdr = append(hdr, "SUPPORTED")
	}
	t := a.NewTable(hdr...)
	n := 0
	for _, it := range items {
		row := []string{it.Name, fmt.Sprintf("0x%04x", it.ID), fmt.Sprint(it.SizeBytes)}
		if o.df.Name != "" {
			s := "-"
			if it.Supported != nil {
				s = cmdutil.YesNo(*it.Supported)
				if *it.Supported {
					n++
				}
			}
			row = append(row, s)
		}
		t.Row(row...)
	}
	t.Flush()
	if o.df.Name != "" {
		fmt.Fprintf(a.Stdout, "%d of %d registers advertised by the firmware\n", n, len(items))
	}
	return nil
}

// ---- get

type regGetOptions struct {
	df          cmdutil.DeviceFlags
	index, op   []string
	field, data string
	raw         bool
	id, length  int
}

func (a *app) regGetCmd() *cobra.Command { return a.newRegGetCmd(nil) }

// newRegGetCmd wires the flags to regGetOptions; runF (tests) replaces runRegGet.
func (a *app) newRegGetCmd(runF func(*regGetOptions, []string) error) *cobra.Command {
	var o regGetOptions
	c := &cobra.Command{
		Use:   "get REG",
		Short: "Read a register, decoded",
		Example: `  cxray reg get MGIR -d emu
  cxray reg get PMAOS -d 0000:03:00.0 --index module=0 -o json
  cxray reg get PDDR -d mlx5_0 --index page_select=Module_info_page --field page_data
  cxray reg get --id 0x9020 --len 160 -d emu`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runRegGet(a.Ctx, &o, args)
		},
	}
	o.df.Add(c)
	c.Flags().StringArrayVar(&o.index, "index", nil, "index field=value (repeat, or comma-separate)")
	c.Flags().StringArrayVar(&o.op, "op", nil, "operation field=value (clr=1 ...)")
	c.Flags().StringVar(&o.field, "field", "", "print only this field (path)")
	c.Flags().BoolVar(&o.raw, "raw", false, "print enum fields as numbers")
	c.Flags().IntVar(&o.id, "id", 0, "register ID, for registers not in the database")
	c.Flags().IntVar(&o.length, "len", 0, "register length in bytes (with --id; or a larger buffer for variable registers)")
	c.Flags().StringVar(&o.data, "data", "", "with --id: bytes to send (hex), e.g. the index fields")
	return c
}

func (a *app) runRegGet(ctx context.Context, o *regGetOptions, args []string) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	idx, err := parseKV(o.index, "--index")
	if err != nil {
		return err
	}
	ops, err := parseKV(o.op, "--op")
	if err != nil {
		return err
	}
	if len(args) == 0 && o.id == 0 {
		return cmdutil.UsageErr("name a register (cxray reg get MGIR), or give --id and --len for one the database lacks")
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	ad, d, err := a.OpenRegisters(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	if o.id != 0 {
		return a.getRaw(ctx, ad, d, uint16(o.id), o.length, o.data)
	}
	r, err := d.Get(ctx, args[0], idx, ops, o.length)
	if err != nil {
		var ie *dev.IndexError
		if errors.As(err, &ie) {
			preferLinkLayer(ctx, ad, ie, idx)
		}
		return cmdutil.Classify(err)
	}
	return a.printReading(ad, r, o.field, o.raw)
}

func (a *app) getRaw(ctx context.Context, ad *adapter.Adapter, d *dev.Device, id uint16, length int, data string) error {
	if length <= 0 || length%4 != 0 || length > 2048 {
		return cmdutil.UsageErr("--len %d: give the register length in bytes, a multiple of 4 (at most 2048)", length)
	}
	buf := make([]byte, length)
	if data != "" {
		b, err := hexdump.Parse(data)
		if err != nil {
			return cmdutil.UsageErr("--data: %v", err)
		}
		if len(b) > length {
			return cmdutil.UsageErr("--data is %d bytes, more than --len %d", len(b), length)
		}
		copy(buf, b)
	}
	out, err := d.GetRaw(ctx, id, buf)
	if err != nil {
		return cmdutil.Classify(err)
	}
	return a.printRaw(ad, id, out)
}

func (a *app) printRaw(ad *adapter.Adapter, id uint16, out []byte) error {
	var dwords []string
	for i := 0; i+4 <= len(out); i += 4 {
		dwords = append(dwords, fmt.Sprintf("0x%02x%02x%02x%02x", out[i], out[i+1], out[i+2], out[i+3]))
	}
	if a.JSON() {
		return a.WriteJSON(rawDocument{Device: ad.Name(), Dwords: dwords, ID: id, SizeBytes: len(out)})
	}
	t := a.NewTable("ADDRESS", "DATA")
	for i, d := range dwords {
		t.Row(fmt.Sprintf("0x%08x", i*4), d)
	}
	t.Flush()
	return nil
}

func (a *app) printReading(ad *adapter.Adapter, r *dev.Reading, field string, raw bool) error {
	if field != "" {
		v, err := r.Decoded.Get(field)
		if err != nil {
			return cmdutil.UsageWrap(err)
		}
		if a.JSON() {
			// As the whole register's JSON shows it (a GUID joined).
			shown, _ := r.Decoded.Shown(field)
			return a.WriteJSON(json.RawMessage(shown.AppendJSON(nil, prm.JSONOptions{Raw: raw})))
		}
		if v.Kind() == prm.KindStruct || v.Kind() == prm.KindUnion || (v.Kind() == prm.KindArray && !v.IsText()) {
			t := a.NewTable()
			for _, row := range subRows(r.Decoded, field) {
				t.Row(row.Path, withUnit(r.Register.Name, row, raw))
			}
			t.Flush()
			return nil
		}
		fmt.Fprintln(a.Stdout, withUnit(r.Register.Name, prm.Row{Path: field, Value: v, Text: prm.FormatValue(v)}, raw))
		return nil
	}
	if a.JSON() {
		return a.WriteJSON(readingDocument{
			Backend:        ad.Backend(),
			BDF:            ad.BDF(),
			Defaulted:      cmdutil.NonNil(r.Defaulted),
			Device:         ad.Name(),
			Fields:         json.RawMessage(r.Decoded.AppendJSON(nil, prm.JSONOptions{Raw: raw})),
			ID:             r.Register.ID,
			NotValid:       r.Decoded.NotValid(),
			Register:       r.Register.Name,
			SourceRevision: ad.DB().Revision,
			Units:          fieldUnits(r.Register.Name, r.Decoded, raw),
			Via:            ad.Path(),
		})
	}
	fmt.Fprintf(a.Stdout, "%s (0x%04x) on %s", r.Register.Name, r.Register.ID, cmdutil.Describe(ad))
	if len(r.Defaulted) > 0 {
		fmt.Fprintf(a.Stdout, "; defaulted %s", strings.Join(r.Defaulted, ", "))
	}
	fmt.Fprintln(a.Stdout)
	t := a.NewTable("FIELD", "VALUE")
	for _, row := range r.Decoded.Rows() {
		t.Row(row.Path, withUnit(r.Register.Name, row, raw))
	}
	t.Flush()
	return nil
}

// withUnit is the row's text with its value in units, when the field has
// known units ("406 = 50.75 °C").
func withUnit(reg string, row prm.Row, raw bool) string {
	if k := row.Value.Kind(); k != prm.KindUint && k != prm.KindJoined {
		return rowText(row, raw)
	}
	return units.Text(reg, row.Path, row.Value, raw)
}

// inUnits rewrites a write plan's changes with their values in units, as
// `reg get` shows them (MTMP thresholds in °C).
func inUnits(wp *dev.WritePlan) []dev.Change {
	out := make([]dev.Change, len(wp.Changes))
	reg := wp.Reading.Register.Name
	for i, c := range wp.Changes {
		out[i] = c
		if v, err := wp.Reading.Decoded.Get(c.Path); err == nil && v.Kind() == prm.KindUint {
			out[i].Before = units.Text(reg, c.Path, v, false)
		}
		if v, err := wp.After.Get(c.Path); err == nil && v.Kind() == prm.KindUint {
			out[i].After = units.Text(reg, c.Path, v, false)
		}
	}
	return out
}

func subRows(d *prm.Decoded, prefix string) []prm.Row {
	var out []prm.Row
	for _, r := range d.Rows() {
		if prm.HasPrefixPath(r.Path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func rowText(r prm.Row, raw bool) string {
	if raw {
		return prm.FormatRaw(r.Value)
	}
	return r.Text
}

// ---- set

type regSetOptions struct {
	df          cmdutil.DeviceFlags
	index       []string
	yes, dryRun bool
	raw         bool
	id, length  int
	data        string
}

func (a *app) regSetCmd() *cobra.Command { return a.newRegSetCmd(nil) }

// newRegSetCmd wires the flags to regSetOptions; runF (tests) replaces runRegSet.
func (a *app) newRegSetCmd(runF func(*regSetOptions, []string) error) *cobra.Command {
	var o regSetOptions
	c := &cobra.Command{
		Use:   "set REG FIELD=VALUE... [--index k=v]",
		Short: "Write register fields (read-modify-write, confirmed, verified)",
		Long: `Write register fields: cxray reads the register, replaces the fields you
give, shows the changes, asks for confirmation (unless --yes), writes, and reads
back to verify. Read-only fields are refused. --dry-run prints the exact bytes
it would send and writes nothing.`,
		Example: `  cxray reg set PAOS admin_status=down_by_configuration ase=1 -d emu --yes
  cxray reg set PMAOS admin_status=enabled ase=1 --index module=0 -d 03:00.0 --dry-run
  cxray reg set --id 0x5006 --len 16 --data 0x00010201,0x80000000,0,0 -d emu --yes`,
		Args: cobra.ArbitraryArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runRegSet(a.Ctx, &o, args)
		},
	}
	o.df.Add(c)
	c.Flags().StringArrayVar(&o.index, "index", nil, "index field=value selecting the instance to write")
	c.Flags().BoolVar(&o.yes, "yes", false, "do not ask for confirmation")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the bytes that would be written; write nothing")
	c.Flags().BoolVar(&o.raw, "raw", false, "allow a number outside an enum field's values (a reserved or newer value)")
	c.Flags().IntVar(&o.id, "id", 0, "register ID, for registers not in the database (with --len and --data)")
	c.Flags().IntVar(&o.length, "len", 0, "register length in bytes (with --id)")
	c.Flags().StringVar(&o.data, "data", "", "with --id: the whole register to write (hex)")
	return c
}

func (a *app) runRegSet(ctx context.Context, o *regSetOptions, args []string) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	if o.id != 0 {
		if len(args) > 0 {
			return cmdutil.UsageErr("with --id give the bytes with --data, not field=value pairs")
		}
		return a.setRaw(o.df, db, uint16(o.id), o.length, o.data, o.yes, o.dryRun)
	}
	if len(args) < 2 {
		return cmdutil.UsageErr("name a register and the fields to set: cxray reg set PAOS admin_status=up ase=1 -d DEV")
	}
	idx, err := parseKV(o.index, "--index")
	if err != nil {
		return err
	}
	fields, err := prm.ParseAssignments(args[1:])
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	ad, err := a.Open(ctx, o.df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	return a.writeRegister(ctx, ad, args[0], idx, fields, dev.SetOptions{AnyValue: o.raw}, o.yes, o.dryRun)
}

// writeRegister is the guarded register write `reg set` and `roce set`
// share: read, show the change, confirm, write, read back to verify.
func (a *app) writeRegister(ctx context.Context, ad *adapter.Adapter, name string, idx, fields []prm.Assignment, so dev.SetOptions, yes, dryRun bool) error {
	d, err := cmdutil.Registers(ctx, ad)
	if err != nil {
		return err
	}
	wp, err := d.PrepareSetWith(ctx, name, idx, fields, so)
	if err != nil {
		return cmdutil.Classify(err)
	}
	reg := wp.Reading.Register
	wp.Changes = inUnits(wp)
	if !a.JSON() {
		fmt.Fprintf(a.Stdout, "%s (0x%04x) on %s", reg.Name, reg.ID, cmdutil.Describe(ad))
		if len(wp.Reading.Defaulted) > 0 {
			fmt.Fprintf(a.Stdout, "; defaulted %s", strings.Join(wp.Reading.Defaulted, ", "))
		}
		fmt.Fprintln(a.Stdout)
		t := a.NewTable("FIELD", "BEFORE", "AFTER")
		for _, c := range wp.Changes {
			t.Row(c.Path, c.Before, c.After)
		}
		t.Flush()
		if len(wp.Changes) == 0 {
			fmt.Fprintln(a.Stdout, "(the register already holds these values; writing anyway)")
		}
	}
	if dryRun {
		return a.printDryRun(ad, wp)
	}
	if err := a.Ask(yes, fmt.Sprintf("Write %s on %s?", reg.Name, ad.Name()), "nothing written"); err != nil {
		return err
	}
	back, err := d.ApplySet(ctx, wp, idx)
	if err != nil {
		return cmdutil.Classify(err)
	}
	if a.JSON() {
		return a.WriteJSON(setDocument{Changes: changesJSON(wp.Changes), Device: ad.Name(),
			Fields: json.RawMessage(back.Decoded.AppendJSON(nil, prm.JSONOptions{})), ID: reg.ID,
			NotVerifiable: cmdutil.NonNil(wp.Unverifiable), Register: reg.Name, Verified: true, Written: hexDwords(wp.Bytes)})
	}
	unver := map[string]bool{}
	for _, p := range wp.Unverifiable {
		unver[p] = true
	}
	var checked []string
	for _, c := range wp.Changes {
		if !unver[c.Path] {
			checked = append(checked, c.Path)
		}
	}
	switch {
	case len(wp.Unverifiable) == 0:
		fmt.Fprintln(a.Stdout, "written and verified by reading back")
	case len(checked) > 0:
		fmt.Fprintf(a.Stdout, "written; %s verified by reading back; %s act on the write and read back cleared by design (not verifiable)\n", strings.Join(checked, ", "), strings.Join(wp.Unverifiable, ", "))
	default:
		fmt.Fprintf(a.Stdout, "written; %s act on the write and read back cleared by design, so nothing could be verified by reading back\n", strings.Join(wp.Unverifiable, ", "))
	}
	return nil
}

// setRaw writes a register the database does not describe: the bytes as
// given, confirmed, then read back and compared.
func (a *app) setRaw(df cmdutil.DeviceFlags, db *prm.DB, id uint16, length int, data string, yes, dryRun bool) error {
	if length <= 0 || length%4 != 0 || length > 2048 {
		return cmdutil.UsageErr("--len %d: give the register length in bytes, a multiple of 4 (at most 2048)", length)
	}
	b, err := hexdump.Parse(data)
	if err != nil {
		return cmdutil.UsageErr("--data: %v", err)
	}
	if len(b) != length {
		return cmdutil.UsageErr("--data is %d bytes; --len says %d: give the whole register", len(b), length)
	}
	if dryRun {
		fmt.Fprintf(a.Stdout, "dry run: would send SET of register 0x%04x, %d bytes:\n", id, length)
		dw := hexDwords(b)
		for i := 0; i < len(dw); i += 4 {
			fmt.Fprintf(a.Stdout, "  0x%02x: %s\n", i*4, strings.Join(dw[i:min(i+4, len(dw))], " "))
		}
		return nil
	}
	ctx, cancel := df.Context(a.Ctx)
	defer cancel()
	ad, d, err := a.OpenRegisters(ctx, df.Name, db)
	if err != nil {
		return err
	}
	defer ad.Close()
	if err := a.Ask(yes, fmt.Sprintf("Write %d raw bytes to register 0x%04x on %s?", length, id, ad.Name()), "nothing written"); err != nil {
		return err
	}
	if _, err := d.SetRaw(ctx, id, b); err != nil {
		return cmdutil.Classify(err)
	}
	back, err := d.GetRaw(ctx, id, append([]byte(nil), b...))
	if err != nil {
		return cmdutil.Classify(fmt.Errorf("the write was sent, but reading it back failed: %w", err))
	}
	same := string(back) == string(b)
	if a.JSON() {
		return a.WriteJSON(rawSetDocument{Device: ad.Name(), ID: id, Identical: same, ReadBack: hexDwords(back), Written: hexDwords(b)})
	}
	fmt.Fprintln(a.Stdout, "written; read back:")
	if err := a.printRaw(ad, id, back); err != nil {
		return err
	}
	if !same {
		fmt.Fprintln(a.Stdout, "note: the read-back differs from what was written (read-only fields, or the firmware adjusted values)")
	}
	return nil
}

type changeJSON struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

func changesJSON(cs []dev.Change) []changeJSON {
	out := []changeJSON{}
	for _, c := range cs {
		out = append(out, changeJSON{c.Path, c.Before, c.After})
	}
	return out
}

func hexDwords(b []byte) []string {
	var out []string
	for i := 0; i+4 <= len(b); i += 4 {
		out = append(out, fmt.Sprintf("0x%02x%02x%02x%02x", b[i], b[i+1], b[i+2], b[i+3]))
	}
	return out
}

func (a *app) printDryRun(ad *adapter.Adapter, wp *dev.WritePlan) error {
	reg := wp.Reading.Register
	dw := hexDwords(wp.Bytes)
	if a.JSON() {
		return a.WriteJSON(dryRunDocument{Changes: changesJSON(wp.Changes), Device: ad.Name(), DryRun: true, ID: reg.ID,
			Register: reg.Name, WouldWrite: dw})
	}
	fmt.Fprintf(a.Stdout, "dry run: would send SET of register 0x%04x, %d bytes:\n", reg.ID, len(wp.Bytes))
	for i := 0; i < len(dw); i += 4 {
		fmt.Fprintf(a.Stdout, "  0x%02x: %s\n", i*4, strings.Join(dw[i:min(i+4, len(dw))], " "))
	}
	return nil
}

// preferLinkLayer hints the port's own protocol for an index field named
// by protocol (PTYS proto_mask): Ethernet on an Ethernet port, never the
// enum's first name.
func preferLinkLayer(ctx context.Context, ad *adapter.Adapter, ie *dev.IndexError, idx []prm.Assignment) {
	lp := 1
	for _, a := range idx {
		if strings.EqualFold(a.Path, "local_port") {
			if n, err := strconv.Atoi(a.Value); err == nil {
				lp = n
			}
		}
	}
	p, err := ad.Port(ctx, lp)
	if err != nil || p.LinkLayer == "" {
		return
	}
	for _, m := range ie.Missing {
		if strings.EqualFold(m, "proto_mask") {
			ie.Prefer(m, p.LinkLayer)
		}
	}
}

// fieldUnits is the JSON "units" object: empty with --raw, which asks for
// the numbers only.
func fieldUnits(reg string, d *prm.Decoded, raw bool) map[string]units.Scaled {
	if raw {
		return map[string]units.Scaled{}
	}
	return units.Fields(reg, d)
}
