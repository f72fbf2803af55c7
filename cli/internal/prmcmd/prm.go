package prmcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/hexdump"
	"github.com/cxray/cxray/feature/prmsearch"
	"github.com/cxray/cxray/internal/prmhistory"
	"github.com/cxray/cxray/nvconf"
	nvbuiltin "github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/cmdb"
	"github.com/cxray/cxray/prm/source"
	"github.com/cxray/cxray/prm/units"
)

func (a *app) prmCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "prm",
		Short: "Find, show, decode and encode PRM registers; diff PRM revisions",
		Long: `The PRM register database: every access register of the ConnectX HCA PRM
with its fields, offsets, widths, access kinds and enum values.

The database is, in order: --adb FILE, $CXRAY_ADB, the ADB installed on this
machine when its revision differs from the built-in one, or the database built
into cxray (with descriptions read from the installed ADB when present).`,
	}
	c.AddCommand(a.prmInfoCmd(), a.prmListCmd(), a.prmShowCmd(), a.prmSearchCmd(),
		a.prmDecodeCmd(), a.prmEncodeCmd(), a.prmDiffCmd(), a.prmCrosscheckCmd())
	return c
}

// target is what a NAME argument names: a register, a layout node of the
// register database, a command of the command database (plan is its in
// layout, out its out layout), or one of its layouts (mkc, e_switch_cap).
type target struct {
	reg  *prm.Register
	node *prm.Node
	plan *prm.Plan
	// db is the database the layout comes from (the register database, or
	// the command database's layouts).
	db      *prm.DB
	cmd     *cmdb.Command
	in, out *prm.Plan
}

func (t *target) name() string {
	switch {
	case t.reg != nil:
		return t.reg.Name
	case t.cmd != nil:
		return t.cmd.Name
	}
	return t.node.Name
}

func (a *app) lookup(db *prm.DB, name string) (*target, error) {
	r, err := db.Register(name)
	if err == nil {
		p, err := db.RegisterPlan(r)
		if err != nil {
			return nil, err
		}
		return &target{reg: r, node: p.Node, plan: p, db: db}, nil
	}
	if n := findNode(db, name); n != nil {
		p, err := db.Plan(n.Name)
		if err != nil {
			return nil, err
		}
		return &target{node: n, plan: p, db: db}, nil
	}
	if t, ok, cerr := lookupCommandSide(name); cerr != nil {
		return nil, cerr
	} else if ok {
		return t, nil
	}
	// Not a register nor a command: say what the name is instead, if
	// anything (a field, an NV parameter), besides the closest names.
	if why := prmsearch.Explain(prmsearch.Sources{DB: db, NV: searchNVDB()}, name); why != "" {
		return nil, cmdutil.UsageErr("no register %q in %s: %s", name, db.Revision, why)
	}
	return nil, cmdutil.UsageWrap(notFoundEverywhere(name, err))
}

// findNode accepts layout node names with or without the _ext suffix.
func findNode(db *prm.DB, name string) *prm.Node {
	for _, n := range []string{name, name + "_ext"} {
		if nd, ok := db.Nodes[n]; ok {
			return nd
		}
	}
	for k, nd := range db.Nodes {
		if strings.EqualFold(k, name) || strings.EqualFold(k, name+"_ext") {
			return nd
		}
	}
	return nil
}

// ---- info

// prmInfoOptions are the options of the verb: it has no flags of its own
// (the output mode is global).
type prmInfoOptions struct{}

func (a *app) prmInfoCmd() *cobra.Command { return a.newPrmInfoCmd(nil) }

// newPrmInfoCmd wires the command; runF (tests) replaces runPrmInfo.
func (a *app) newPrmInfoCmd(runF func(*prmInfoOptions, []string) error) *cobra.Command {
	var o prmInfoOptions
	c := &cobra.Command{
		Use:   "info",
		Short: "Which register database is in use: source, revision, counts",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return a.runPrmInfo(a.Ctx, &o)
		},
	}
	return c
}

// runPrmInfo is the work of the "info" command, apart from its cobra wiring.
func (a *app) runPrmInfo(ctx context.Context, _ *prmInfoOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	warn := 0
	for _, r := range db.Registers {
		if p, err := db.RegisterPlan(r); err == nil {
			warn += len(p.Warnings)
		}
	}
	info := struct {
		Source          string             `json:"source"`
		Revision        string             `json:"revision"`
		Registers       int                `json:"registers"`
		Nodes           int                `json:"nodes"`
		Fields          int                `json:"fields"`
		HasDescriptions bool               `json:"has_descriptions"`
		LayoutWarnings  int                `json:"layout_warnings"`
		Installed       []source.Installed `json:"installed"`
	}{db.Source, db.Revision, len(db.Registers), len(db.Nodes), db.FieldCount(), db.HasDescriptions, warn, source.Found()}
	if info.Installed == nil {
		info.Installed = []source.Installed{}
	}
	if a.JSON() {
		return a.WriteJSON(info)
	}
	t := a.NewTable()
	t.Row("source:", info.Source)
	t.Row("revision:", info.Revision)
	t.Row("registers:", fmt.Sprint(info.Registers))
	t.Row("nodes:", fmt.Sprint(info.Nodes))
	t.Row("fields:", fmt.Sprint(info.Fields))
	t.Row("descriptions:", cmdutil.YesNo(info.HasDescriptions))
	t.Row("layout warnings:", fmt.Sprint(info.LayoutWarnings))
	if len(info.Installed) == 0 {
		t.Row("installed ADBs:", "none (apt-get install -y mstflint adds one with descriptions)")
	}
	for i, in := range info.Installed {
		label := ""
		if i == 0 {
			label = "installed ADBs:"
		}
		t.Row(label, in.Path+" ("+in.Revision+")")
	}
	t.Flush()
	return nil
}

// ---- list

// prmListOptions holds the flags of the "list" command.
type prmListOptions struct {
	filter string
}

func (a *app) prmListCmd() *cobra.Command { return a.newPrmListCmd(nil) }

// newPrmListCmd wires the flags to prmListOptions; runF (tests) replaces runPrmList.
func (a *app) newPrmListCmd(runF func(*prmListOptions, []string) error) *cobra.Command {
	o := &prmListOptions{}
	c := &cobra.Command{
		Use:   "list",
		Short: "List the registers (name, ID, size)",
		Args:  cobra.NoArgs,
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runPrmList(a.Ctx, o)
		},
	}
	c.Flags().StringVar(&o.filter, "filter", "", "only names matching this regular expression (case-insensitive)")
	return c
}

// runPrmList is the work of the "list" command, apart from its cobra wiring.
func (a *app) runPrmList(ctx context.Context, o *prmListOptions) error {
	re, err := cmdutil.CompileFilter(o.filter)
	if err != nil {
		return err
	}
	db, err := a.DB()
	if err != nil {
		return err
	}
	items := []listItem{}
	for _, r := range db.Registers {
		if re != nil && !re.MatchString(r.Name) && !re.MatchString(r.Node) {
			continue
		}
		items = append(items, listItem{r.Name, r.ID, r.Size, r.Node})
	}
	if a.JSON() {
		return a.WriteJSON(listDocument{Registers: items, SourceRevision: db.Revision})
	}
	t := a.NewTable("NAME", "ID", "SIZE", "NODE")
	for _, it := range items {
		t.Row(it.Name, fmt.Sprintf("0x%04x", it.ID), fmt.Sprint(it.SizeBytes), it.Node)
	}
	t.Flush()
	fmt.Fprintf(a.Stdout, "%d registers (%s, %s)\n", len(items), db.Revision, db.Source)
	return nil
}

// ---- show

type showField struct {
	Path        string            `json:"path"`
	BitOffset   int               `json:"bit_offset"`
	BitWidth    int               `json:"bit_width"`
	Count       int               `json:"count,omitempty"`
	Variable    bool              `json:"variable,omitempty"`
	Access      string            `json:"access"`
	Enum        map[string]uint64 `json:"enum"`
	When        string            `json:"when,omitempty"`
	ValidWhen   string            `json:"valid_when,omitempty"`
	Description string            `json:"description,omitempty"`
}

type showJoined struct {
	Path      string   `json:"path"`
	BitOffset int      `json:"bit_offset"`
	BitWidth  int      `json:"bit_width"`
	Parts     []string `json:"parts"`
	Format    string   `json:"format"`
}

// PrmShowOptions is what `cxray prm show` was asked.
type PrmShowOptions struct {
	Name             string
	Path             string
	Brief, NoDiagram bool
}

func (a *app) prmShowCmd() *cobra.Command { return a.newPrmShowCmd(nil) }

// newPrmShowCmd wires the flags to PrmShowOptions; runF (tests) replaces runPrmShow.
func (a *app) newPrmShowCmd(runF func(*PrmShowOptions, []string) error) *cobra.Command {
	o := &PrmShowOptions{}
	c := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a register's layout: offsets, bit ranges, widths, access, enums, meaning",
		Long: `Show a register's layout. NAME is a register name or ID (PMAOS, 0x5012), a
layout node (config_item), a command (QUERY_HCA_CAP: its in and out
mailboxes) or a layout of the command interface by the kernel's mlx5_ifc.h
name (mkc, qpc, e_switch_cap, cmd_hca_cap, initial_seg). Offsets are given
both ways: ADDR/BITS as the PRM and mstreg print them (dword address, bits
counted from the dword's LSB), and MSB as mlx5_ifc.h counts (bits from the
most significant bit of byte 0).`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			o.Name = args[0]
			return a.runPrmShow(a.Ctx, o)
		},
	}
	c.Flags().StringVar(&o.Path, "path", "", "only fields under this path (e.g. page_data.pddr_module_info_ext)")
	c.Flags().BoolVar(&o.Brief, "brief", false, "leave out descriptions")
	c.Flags().BoolVar(&o.NoDiagram, "no-diagram", false, "leave out the bit-layout drawing")
	return c
}

// Show is `cxray prm show` with options (mlxreg's --show_reg runs it).
func Show(a *cmdutil.App, o *PrmShowOptions) error { return (&app{a}).runPrmShow(a.Ctx, o) }

// runPrmShow is `cxray prm show`: a register's, command's or layout's
// fields as a table and a bit diagram, or JSON.
func (a *app) runPrmShow(ctx context.Context, o *PrmShowOptions) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	t, err := a.lookup(db, o.Name)
	if err != nil {
		return err
	}
	if t.cmd != nil {
		return a.showCommand(t, o.Path, o.Brief, o.NoDiagram)
	}
	db = t.db
	var leaves []prm.Leaf
	for _, l := range t.plan.Leaves() {
		if prm.HasPrefixPath(l.Path, o.Path) {
			leaves = append(leaves, l)
		}
	}
	if len(leaves) == 0 && o.Path != "" {
		return cmdutil.UsageErr("%s has no field under %q; run 'cxray prm show %s' to see its fields", t.name(), o.Path, t.name())
	}
	if a.JSON() {
		return a.WriteJSON(showJSON(db, t, leaves))
	}
	a.showTable(db, t, leaves, o.Brief)
	if !o.NoDiagram {
		fmt.Fprintln(a.Stdout)
		writeDiagram(a.Stdout, t.plan, leaves, o.Path)
	}
	return nil
}

// showDoc is `prm show -o json` of a register or layout: its fields as
// the database lays them out.
type showDoc struct {
	Name           string       `json:"name"`
	ID             *uint32      `json:"id"`
	Node           string       `json:"node"`
	SizeBytes      int          `json:"size_bytes"`
	SourceRevision string       `json:"source_revision"`
	Source         string       `json:"source"`
	Description    string       `json:"description,omitempty"`
	Fields         []showField  `json:"fields"`
	Joined         []showJoined `json:"joined"`
	Warnings       []string     `json:"warnings,omitempty"`
}

func showJSON(db *prm.DB, t *target, leaves []prm.Leaf) *showDoc {
	out := &showDoc{Name: t.name(), Node: t.node.Name, SizeBytes: t.plan.Bytes, SourceRevision: db.Revision, Source: db.Source,
		Description: db.NodeDescr(t.node), Fields: []showField{}, Joined: []showJoined{}, Warnings: t.plan.Warnings}
	if t.reg != nil {
		id := t.reg.ID
		out.ID = &id
		out.SizeBytes = max(t.reg.Size, t.plan.Bytes)
	}
	for _, l := range leaves {
		if l.Joined {
			j := showJoined{Path: l.Path, BitOffset: l.Bit, BitWidth: l.Width, Format: l.Step.Join.String(), Parts: l.Step.PartNames()}
			out.Joined = append(out.Joined, j)
			continue
		}
		f := showField{Path: l.Path, BitOffset: l.Bit, BitWidth: l.Width, Access: leafAccess(db, l),
			Enum: map[string]uint64{}, When: l.When, ValidWhen: l.Step.ValidWhen, Variable: l.Variable, Description: db.FieldDescr(l.Field())}
		if l.Count > 0 {
			f.Count = l.Count
		}
		for _, e := range l.Enum() {
			f.Enum[e.Name] = e.Value
		}
		out.Fields = append(out.Fields, f)
	}
	return out
}

func (a *app) showTable(db *prm.DB, t *target, leaves []prm.Leaf, brief bool) {
	w := a.Stdout
	head := t.name()
	if t.reg != nil {
		head += fmt.Sprintf("  register 0x%04x, %d bytes, layout %s", t.reg.ID, max(t.reg.Size, t.plan.Bytes), t.node.Name)
	} else {
		head += fmt.Sprintf("  layout node, %d bytes", t.plan.Bytes)
	}
	fmt.Fprintf(w, "%s\n%s (%s)\n", head, db.Revision, db.Source)
	if d := db.NodeDescr(t.node); d != "" && !brief {
		fmt.Fprintln(w, cmdutil.Indent(d, "  "))
	}
	for _, wn := range t.plan.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wn)
	}
	fmt.Fprintln(w)
	rows := [][]string{{"FIELD", "ADDR", "BITS", "MSB", "WIDTH", "ACCESS", "VALUES"}}
	var details []string
	lastWhen := ""
	for _, l := range leaves {
		name := l.Path
		if l.Count > 0 || l.Variable {
			if l.Variable {
				name += "[]"
			} else {
				name += fmt.Sprintf("[%d]", l.Count)
			}
		}
		bits := fmt.Sprintf("[%d:%d]", 31-l.Bit%32, 32-l.Bit%32-l.Width)
		if l.Width >= 32 || l.Count > 0 || l.Variable {
			n := l.Width
			if l.Count > 0 {
				n *= l.Count
			}
			bits = fmt.Sprintf("%d bytes", n/8)
			if n%8 != 0 {
				bits = fmt.Sprintf("%d bits", n)
			}
		}
		access := leafAccess(db, l)
		values := enumText(l.Enum())
		if v := l.Step.ValidWhen; v != "" {
			values = strings.TrimPrefix(values+"; valid only when "+v, "; ")
		}
		if l.Joined {
			access = "joined"
			values = strings.Join(l.Step.PartNames(), " + ")
			if j := l.Step.Join; j != prm.JoinNumber {
				values += " (" + j.String() + ")"
			}
		}
		detail := ""
		if l.When != lastWhen && l.When != "" {
			rows = append(rows, []string{"when " + l.When + ":"})
			details = append(details, "")
		}
		lastWhen = l.When
		if !brief && !l.Joined {
			detail = db.FieldDescr(l.Field())
		}
		rows = append(rows, []string{name, fmt.Sprintf("0x%02x", l.Bit/32*4), bits, fmt.Sprint(l.Bit), fmt.Sprint(l.Width), access, values})
		details = append(details, detail)
	}
	cmdutil.WriteRows(w, rows, details)
}

func enumText(es []prm.EnumValue) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s=%d", e.Name, e.Value)
	}
	return strings.Join(parts, ", ")
}

// ---- search

// prmSearchOptions holds the flags of the "search" command.
type prmSearchOptions struct {
	noHistory  bool
	historyDir string
}

func (a *app) prmSearchCmd() *cobra.Command { return a.newPrmSearchCmd(nil) }

// newPrmSearchCmd wires the flags to prmSearchOptions; runF (tests) replaces runPrmSearch.
func (a *app) newPrmSearchCmd(runF func(*prmSearchOptions, []string) error) *cobra.Command {
	o := &prmSearchOptions{}
	c := &cobra.Command{
		Use:   "search WORD",
		Short: "Search registers, fields, enum values, descriptions, NV parameters and older PRM revisions",
		Long: `Search everything cxray knows of the PRM for WORD (case-insensitive): register
names, field paths, enum value names, descriptions (when the database has
them), NV configuration parameters with their TLV and bits, and, when the
PRM revision history is at hand, names of other revisions ("renamed in Rev
0.59 to ..."); then command names and the fields of the command interface's
layouts (mlx5_ifc.h: mailboxes, contexts, capability pages). Words are matched in any order (MODULE_TEMP finds
pddr_module_info_ext.temperature); a regular expression is accepted. Names
close to WORD are suggested. Exit status 1 when nothing matches: a "did you
mean" suggestion is not a match.

The PRM revision history is a folder of other revisions' ADB files (any
*.adb; NVIDIA's register_access_table.adb of older or newer MFT or mstflint
releases, such as hca-ext-rev0.57.adb ... hca-ext-rev0.64.adb): --history
DIR, else $CXRAY_PRM_HISTORY, else ` + prmhistory.DataDir + `.
With it, a name another revision has is found with what became of it:
added, removed, renamed (also across a revision that dropped the field:
last_ber_mantissa, renamed to last_raw_ber_coef).`,
		Example: `  cxray prm search log_tx_psn_window
  cxray prm search module_temp
  cxray prm search 'fec.*active' -o json
  cxray prm search last_ber_mantissa --history ~/prm-history`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runPrmSearch(a.Ctx, o, args)
		},
	}
	c.Flags().BoolVar(&o.noHistory, "no-history", false, "do not search the other PRM revisions of the history folder")
	c.Flags().StringVar(&o.historyDir, "history", "", "folder of other PRM revisions' ADB files (default $"+prmhistory.Env+", then "+prmhistory.DataDir+")")
	return c
}

// runPrmSearch is the work of the "search" command, apart from its cobra wiring.
func (a *app) runPrmSearch(ctx context.Context, o *prmSearchOptions, args []string) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	src := prmsearch.Sources{DB: db, NV: searchNVDB()}
	histDir, haveHistory := "", false
	if !o.noHistory {
		histDir, haveHistory = prmhistory.ForCommands(o.historyDir)
		if o.historyDir != "" && !haveHistory {
			return cmdutil.UsageErr("--history %s: no PRM database (*.adb) in that folder; give the folder holding the ADB files of other PRM revisions", o.historyDir)
		}
		src.History = func() []*prm.DB { return searchHistory(histDir) }
	}
	res := prmsearch.Search(src, args[0])
	cmdHits, cdb, err := searchCommands(args[0])
	if err != nil {
		return err
	}
	res.Hits = append(res.Hits, cmdHits...)
	if a.JSON() {
		if err := a.WriteJSON(searchDocument{CommandRevision: cdb.Revision, HasDescriptions: db.HasDescriptions,
			Hits: res.Hits, Query: res.Query, SourceRevision: db.Revision, Suggestions: res.Suggestions}); err != nil {
			return err
		}
		if !res.Found() {
			return cmdutil.ErrProblem
		}
		return nil
	}
	t := a.NewTable("KIND", "REGISTER/TLV", "NAME", "WHERE", "SHOW WITH")
	for _, h := range res.Hits {
		reg := h.Register
		if reg == "" {
			reg = h.Path
		}
		where := h.Text
		if h.Kind == prmsearch.KindField || h.Kind == prmsearch.KindDescription && h.Register != "" {
			if h.Path != "" && h.Path != h.Name {
				where = h.Path + ": " + where
			}
		}
		t.Row(h.Kind, reg, h.Name, where, h.Hint)
	}
	t.Flush()
	fmt.Fprintf(a.Stdout, "%d matches", len(res.Hits))
	if !db.HasDescriptions {
		fmt.Fprint(a.Stdout, " (names only: this database has no descriptions; apt-get install -y mstflint adds them)")
	}
	fmt.Fprintln(a.Stdout)
	if len(res.Suggestions) > 0 {
		fmt.Fprintf(a.Stdout, "did you mean: %s\n", strings.Join(res.Suggestions, ", "))
	}
	if !res.Found() {
		if !o.noHistory && !haveHistory {
			fmt.Fprintf(a.Stdout, "other PRM revisions were not searched: give their folder with --history DIR or $%s\n", prmhistory.Env)
		}
		return cmdutil.ErrProblem
	}
	return nil
}

// searchNVDB is the NV parameter database for searches: as config loads
// it ($CXRAY_NVDB, the installed one, the built-in), nil when none loads.
func searchNVDB() *nvconf.DB {
	path := os.Getenv(cmdutil.EnvNVDB)
	if path == "" {
		if _, err := os.Stat(nvconf.MstflintPath); err == nil {
			path = nvconf.MstflintPath
		}
	}
	if path != "" && !strings.EqualFold(path, "builtin") {
		if db, err := nvconf.LoadSQLite(path); err == nil {
			return db
		}
	}
	db, err := nvbuiltin.Load()
	if err != nil {
		return nil
	}
	return db
}

// searchHistory loads the PRM revisions of the history folder, oldest
// first; none when dir is "".
func searchHistory(dir string) []*prm.DB {
	if dir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.adb"))
	var out []*prm.DB
	for _, f := range files {
		if db, err := adb.LoadFile(f); err == nil {
			out = append(out, db)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return revisionOrder(out[i].Revision) < revisionOrder(out[j].Revision) })
	return out
}

// revisionOrder sorts "Rev 0.9" before "Rev 0.51" (a database's
// revision, whatever its file is called).
func revisionOrder(rev string) string {
	rev = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rev), "Rev"))
	major, minor, _ := strings.Cut(rev, ".")
	return fmt.Sprintf("%08s.%08s", major, minor)
}

// ---- decode

// prmDecodeOptions holds the flags of the "decode" command.
// decodeDoc is `prm decode -o json`: ID for a register, Opcode and
// Layout (the mailbox) for a command.
type decodeDoc struct {
	Fields         json.RawMessage         `json:"fields"`
	ID             *uint32                 `json:"id,omitempty"`
	Layout         string                  `json:"layout,omitempty"`
	Name           string                  `json:"name"`
	Opcode         *uint16                 `json:"opcode,omitempty"`
	SizeBytes      int                     `json:"size_bytes"`
	SourceRevision string                  `json:"source_revision"`
	Units          map[string]units.Scaled `json:"units"`
}

// encodeDoc is `prm encode -o json`.
type encodeDoc struct {
	Dwords         []string        `json:"dwords"`
	Fields         json.RawMessage `json:"fields"`
	Hex            string          `json:"hex"`
	ID             *uint32         `json:"id,omitempty"`
	Layout         string          `json:"layout,omitempty"`
	Name           string          `json:"name"`
	Opcode         *uint16         `json:"opcode,omitempty"`
	SizeBytes      int             `json:"size_bytes"`
	SourceRevision string          `json:"source_revision"`
}

type prmDecodeOptions struct {
	file, field     string
	raw, pad, inBox bool
}

func (a *app) prmDecodeCmd() *cobra.Command { return a.newPrmDecodeCmd(nil) }

// newPrmDecodeCmd wires the flags to prmDecodeOptions; runF (tests) replaces runPrmDecode.
func (a *app) newPrmDecodeCmd(runF func(*prmDecodeOptions, []string) error) *cobra.Command {
	o := &prmDecodeOptions{}
	c := &cobra.Command{
		Use:   "decode NAME [HEX...]",
		Short: "Decode register bytes (a hex dump) into fields",
		Long: `Decode register bytes into named fields with enum names, text and joined
values. The bytes come from the arguments, --file FILE, or standard input
("-" or no HEX). Dumps are read as people paste them: dwords (0x00000218 ...),
runs of hex digits, hexdump -C, xxd, od -t x1, mstreg's and mlxreg's whole
--get output (the "Address | Data" dword table, or the "Field Name | Data"
field table of --reg_name), cxray's own reg get tables (with or without --raw,
--id) and JSON, and rdma -j ... -r data. Address columns are honoured; a gap is
zero-filled with a note. NAME may be a command layout (qpc, mkc,
nvmf_frontend_namespace_context) or a command, whose out mailbox is decoded
(its in mailbox with --in).`,
		Example: `  cxray prm decode PMAOS 0x00010101 0x00000000 0x00000000 0x00000000
  cxray prm decode MGIR --file mgir.txt -o json
  cxray prm decode qpc --file dump.txt`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runPrmDecode(a.Ctx, o, args)
		},
	}
	c.Flags().StringVar(&o.file, "file", "", "read the hex dump from FILE ('-' for standard input)")
	c.Flags().StringVar(&o.field, "field", "", "print only this field (path)")
	c.Flags().BoolVar(&o.raw, "raw", false, "print enum fields as numbers")
	c.Flags().BoolVar(&o.pad, "pad", false, "accept a short dump and treat the missing bytes as zero")
	c.Flags().BoolVar(&o.inBox, "in", false, "for a command: decode its in mailbox (default: the out mailbox)")
	return c
}

// runPrmDecode is the work of the "decode" command, apart from its cobra wiring.
func (a *app) runPrmDecode(ctx context.Context, o *prmDecodeOptions, args []string) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	t, err := a.lookup(db, args[0])
	if err != nil {
		return err
	}
	if err := t.pickMailbox(o.inBox, "decode"); err != nil {
		return err
	}
	db = t.db
	text, err := a.hexInput(args[1:], o.file)
	if err != nil {
		return err
	}
	dump, err := hexdump.ReadBytes([]byte(text))
	if err != nil {
		return cmdutil.UsageErr("%v", err)
	}
	if dump.Register != "" && !strings.EqualFold(dump.Register, t.name()) {
		return cmdutil.UsageErr("the dump names register %s, not %s; run 'cxray prm decode %s' on it", dump.Register, t.name(), dump.Register)
	}
	buf := dump.Bytes
	if dump.Fields != nil {
		// Field values (mstreg --reg_name, cxray reg get): the
		// layout turns them into bytes; fields not given are zero.
		if buf, err = dump.Encode(t.plan); err != nil {
			return cmdutil.UsageErr("%v", err)
		}
		o.pad = true
	}
	for _, n := range dump.Notes {
		fmt.Fprintf(a.Stderr, "cxray: note: %s\n", n)
	}
	buf, err = fitLength(t, buf, o.pad)
	if err != nil {
		return err
	}
	d, err := t.plan.Decode(buf)
	if err != nil {
		return cmdutil.UsageErr("%v", err)
	}
	return a.printDecoded(db, t, d, o.field, o.raw)
}

func (a *app) hexInput(args []string, file string) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", cmdutil.UsageErr("give the bytes either as arguments or with --file, not both")
	case file == "-" || (file == "" && (len(args) == 0 || len(args) == 1 && args[0] == "-")):
		b, err := io.ReadAll(io.LimitReader(a.Stdin, 16<<20))
		if err != nil {
			return "", err
		}
		return string(b), nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", cmdutil.UsageErr("%v", err)
		}
		return string(b), nil
	}
	return strings.Join(args, " "), nil
}

// fitLength checks the dump's length against the register's.
func fitLength(t *target, buf []byte, pad bool) ([]byte, error) {
	want := t.plan.Bytes
	if t.reg != nil && t.reg.Size > want {
		want = t.reg.Size
	}
	switch {
	case len(buf) == 0:
		return nil, cmdutil.UsageErr("no bytes given; paste the register as hex (for example 0x00000218 0x00000000 ...)")
	case len(buf) < want && pad:
		return append(buf, make([]byte, want-len(buf))...), nil
	case len(buf) < want:
		return nil, cmdutil.UsageErr("%s is %d bytes (%d dwords); got %d bytes (%d dwords). Paste the whole register, or add --pad to treat the rest as zero", t.name(), want, want/4, len(buf), len(buf)/4)
	case len(buf) > want && !t.plan.HasVariable():
		return nil, cmdutil.UsageErr("%s is %d bytes (%d dwords); got %d bytes. Is this dump of another register? Remove the extra bytes", t.name(), want, want/4, len(buf))
	}
	return buf, nil
}

func (a *app) printDecoded(db *prm.DB, t *target, d *prm.Decoded, field string, raw bool) error {
	opt := prm.JSONOptions{Raw: raw}
	if field != "" {
		v, err := d.Get(field)
		if err != nil {
			return cmdutil.UsageWrap(err)
		}
		if a.JSON() {
			shown, _ := d.Shown(field) // as the whole register's JSON (a GUID joined)
			return a.WriteJSON(json.RawMessage(shown.AppendJSON(nil, opt)))
		}
		if k := v.Kind(); k == prm.KindStruct || k == prm.KindUnion && v.Member() != prm.MemberNone || k == prm.KindArray && !v.IsText() {
			// A structure: its fields, one per row (never "0x").
			tb := a.NewTable()
			for _, r := range d.Rows() {
				if prm.HasPrefixPath(r.Path, v.Path()) {
					tb.Row(r.Path, units.Text(t.name(), r.Path, r.Value, raw))
				}
			}
			tb.Flush()
			return nil
		}
		fmt.Fprintln(a.Stdout, units.Text(t.name(), v.Path(), v, raw))
		return nil
	}
	if a.JSON() {
		out := decodeDoc{Name: t.name(), SizeBytes: len(d.Raw), SourceRevision: db.Revision,
			Fields: json.RawMessage(d.AppendJSON(nil, opt)), Units: units.Fields(t.name(), d)}
		out.ID, out.Opcode, out.Layout = t.ident()
		if raw {
			out.Units = map[string]units.Scaled{} // --raw: the numbers only
		}
		return a.WriteJSON(out)
	}
	rows := d.Rows()
	tb := a.NewTable("FIELD", "VALUE")
	for _, r := range rows {
		tb.Row(r.Path, units.Text(t.name(), r.Path, r.Value, raw))
	}
	tb.Flush()
	return nil
}

// ---- encode

// prmEncodeOptions holds the flags of the "encode" command.
type prmEncodeOptions struct {
	base string
	size int
	raw  bool
}

func (a *app) prmEncodeCmd() *cobra.Command { return a.newPrmEncodeCmd(nil) }

// newPrmEncodeCmd wires the flags to prmEncodeOptions; runF (tests) replaces runPrmEncode.
func (a *app) newPrmEncodeCmd(runF func(*prmEncodeOptions, []string) error) *cobra.Command {
	o := &prmEncodeOptions{}
	c := &cobra.Command{
		Use:   "encode NAME FIELD=VALUE...",
		Short: "Build register bytes from field=value assignments",
		Long: `Build register bytes from field=value assignments. Values are numbers in any
base (42, 0x2a, 0b101010, -1 as two's complement), enum names, text for ASCII
fields (psid=MT_0000000838), or aa:bb:cc:dd:ee:ff for joined MAC fields. Bits
no field owns stay zero. Fields inside a union name the member
(page_data.pddr_module_info_ext.temperature); the selector is set for you.
NAME may be a command: its in mailbox is built, with the opcode set.`,
		Example: `  cxray prm encode PAOS local_port=1 admin_status=up ase=1
  cxray prm encode PMAOS module=0 admin_status=enabled ase=1 -o json
  cxray prm encode QUERY_HCA_CAP op_mod=0x13`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o, args)
			}
			return a.runPrmEncode(a.Ctx, o, args)
		},
	}
	c.Flags().StringVar(&o.base, "base", "", "start from these bytes (hex) instead of zeros")
	c.Flags().IntVar(&o.size, "size", 0, "buffer size in bytes, for registers that end in a variable array")
	c.Flags().BoolVar(&o.raw, "raw", false, "accept a number outside an enum field's values")
	return c
}

// runPrmEncode is the work of the "encode" command, apart from its cobra wiring.
func (a *app) runPrmEncode(ctx context.Context, o *prmEncodeOptions, args []string) error {
	db, err := a.DB()
	if err != nil {
		return err
	}
	t, err := a.lookup(db, args[0])
	if err != nil {
		return err
	}
	as, err := prm.ParseAssignments(args[1:])
	if err != nil {
		return cmdutil.UsageWrap(err)
	}
	if t.cmd != nil {
		if err := t.pickMailbox(true, "encode"); err != nil {
			return err
		}
		as = withOpcode(t.cmd, as)
	}
	db = t.db
	buf := t.plan.NewBuffer()
	if o.size > 0 {
		if o.size < len(buf) || o.size%4 != 0 {
			return cmdutil.UsageErr("--size %d: give a multiple of 4 of at least %d bytes", o.size, len(buf))
		}
		buf = make([]byte, o.size)
	}
	if o.base != "" {
		b, err := hexdump.Parse(o.base)
		if err != nil {
			return cmdutil.UsageErr("--base: %v", err)
		}
		if buf, err = fitLength(t, b, false); err != nil {
			return err
		}
	}
	// As reg set does: a number outside an enum is refused unless
	// --raw says it is meant (reserved values, newer firmware's).
	for _, x := range as {
		if path, names, out := t.plan.OutsideEnum(x); out && !o.raw {
			return cmdutil.UsageErr("%s.%s=%s: not one of its values (%s); give --raw to encode a value outside the list", t.name(), path, x.Value, strings.Join(names, ", "))
		}
	}
	if err := t.plan.Encode(buf, as); err != nil {
		return cmdutil.UsageWrap(err)
	}
	d, err := t.plan.Decode(buf)
	if err != nil {
		return err
	}
	return a.printEncoded(db, t, d)
}

func (a *app) printEncoded(db *prm.DB, t *target, d *prm.Decoded) error {
	dwords := make([]string, 0, len(d.Raw)/4)
	for i := 0; i+4 <= len(d.Raw); i += 4 {
		dwords = append(dwords, fmt.Sprintf("0x%02x%02x%02x%02x", d.Raw[i], d.Raw[i+1], d.Raw[i+2], d.Raw[i+3]))
	}
	if a.JSON() {
		out := encodeDoc{Name: t.name(), SizeBytes: len(d.Raw), SourceRevision: db.Revision,
			Hex: fmt.Sprintf("%x", d.Raw), Dwords: dwords, Fields: json.RawMessage(d.AppendJSON(nil, prm.JSONOptions{}))}
		out.ID, out.Opcode, out.Layout = t.ident()
		return a.WriteJSON(out)
	}
	fmt.Fprintf(a.Stdout, "%s, %d bytes:\n", t.name(), len(d.Raw))
	for i := 0; i < len(dwords); i += 4 {
		fmt.Fprintf(a.Stdout, "  0x%02x: %s\n", i*4, strings.Join(dwords[i:min(i+4, len(dwords))], " "))
	}
	var set []string
	for _, r := range d.Rows() {
		if !isZero(r.Value) {
			set = append(set, fmt.Sprintf("  %s = %s", r.Path, r.Text))
		}
	}
	if len(set) > 0 {
		fmt.Fprintln(a.Stdout, "non-zero fields:")
		fmt.Fprintln(a.Stdout, strings.Join(set, "\n"))
	}
	return nil
}

func isZero(v prm.Value) bool {
	switch v.Kind() {
	case prm.KindUint, prm.KindJoined:
		return v.Uint() == 0
	}
	for _, b := range v.Raw() {
		if b != 0 {
			return false
		}
	}
	return true
}
