package prmcmd

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/prmsearch"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// The prm commands also cover the command interface: the layouts of
// mlx5_ifc.h and the NVMe-oF facts (prm/cmdb), by the kernel's names. A
// name is looked up as a register, a register layout node, a command, then
// a command layout.

// lookupCommandSide finds a command (by name, not by number: numbers are
// register IDs) or a command layout.
func lookupCommandSide(name string) (*target, bool, error) {
	cdb, err := cmdb.Load()
	if err != nil {
		return nil, false, fmt.Errorf("command database: %w", err)
	}
	if !isNumber(name) {
		if c, err := cdb.Command(name); err == nil {
			t := &target{cmd: c, db: cdb.Layouts}
			if c.In != "" {
				if t.in, err = cdb.Plan(c.In); err != nil {
					return nil, false, err
				}
			}
			t.plan = t.in
			if c.Out != "" {
				if t.out, err = cdb.Plan(c.Out); err != nil {
					return nil, false, err
				}
			}
			if t.plan != nil {
				t.node = t.plan.Node
			}
			return t, true, nil
		}
	}
	if n, ok := cdb.Layout(name); ok {
		p, err := cdb.Plan(n.Name)
		if err != nil {
			return nil, false, err
		}
		return &target{node: n, plan: p, db: cdb.Layouts}, true, nil
	}
	return nil, false, nil
}

func isNumber(s string) bool {
	_, err := prm.ParseUint(s)
	return err == nil
}

// notFoundEverywhere says a name is in neither database, with suggestions
// from both.
func notFoundEverywhere(name string, regErr error) error {
	cdb, err := cmdb.Load()
	if err != nil {
		return regErr
	}
	var cands []string
	cands = append(cands, cdb.CommandNames()...)
	cands = append(cands, cdb.LayoutNames()...)
	s := prm.Closest(name, cands, 3)
	msg := regErr.Error()
	// Register suggestions come first: a misspelt register (MTPM) is far
	// more common than a misspelt command.
	head, regHint, _ := strings.Cut(msg, "; ")
	msg = head + ", nor a command or command layout"
	switch {
	case strings.Contains(regHint, "did you mean"):
		msg += "; " + regHint
		if len(s) > 0 {
			msg += " (commands: " + strings.Join(s, ", ") + ")"
		}
	case len(s) > 0:
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
	case regHint != "":
		msg += "; " + regHint
	}
	return &prm.NotFoundError{Msg: msg}
}

// pickMailbox points plan at a command's in (in) or out mailbox.
func (t *target) pickMailbox(in bool, verb string) error {
	if t.cmd == nil {
		if in && verb == "decode" {
			return cmdutil.UsageErr("--in is for commands; %s is a layout", t.name())
		}
		return nil
	}
	p, which := t.out, "out"
	if in {
		p, which = t.in, "in"
	}
	if p == nil {
		return cmdutil.UsageErr("%s (0x%x): no source cxray has describes its %s mailbox, so it cannot %s it", t.cmd.Name, t.cmd.Opcode, which, verb)
	}
	t.plan, t.node = p, p.Node
	return nil
}

// withOpcode puts the command's opcode in front of the user's assignments
// (a later opcode= from the user wins, as any later assignment does).
func withOpcode(c *cmdb.Command, as []prm.Assignment) []prm.Assignment {
	return append([]prm.Assignment{{Path: "opcode", Value: fmt.Sprint(c.Opcode)}}, as...)
}

// commandJSON adds the command's facts to a decode/encode JSON object.
// ident is what names the register or command a decode or encode
// document is of: the register's ID, or the command's opcode and the
// layout (mailbox) used; nil and "" for what it is not.
func (t *target) ident() (id *uint32, opcode *uint16, layout string) {
	if t.reg != nil {
		v := t.reg.ID
		id = &v
	}
	if t.cmd != nil {
		op := t.cmd.Opcode
		opcode, layout = &op, t.plan.Node.Name
	}
	return id, opcode, layout
}

type fwctlRule struct {
	OpMod    string `json:"op_mod"`
	Scope    string `json:"scope"`
	Modifies bool   `json:"modifies"`
}

func fwctlRules(c *cmdb.Command) []fwctlRule {
	out := []fwctlRule{}
	for _, r := range c.Fwctl {
		m := map[cmdb.OpModClass]string{cmdb.OpModAny: "any", cmdb.OpModZero: "0", cmdb.OpModNonZero: "non-zero"}[r.OpMod]
		out = append(out, fwctlRule{OpMod: m, Scope: r.Scope.String(), Modifies: r.Modifies})
	}
	return out
}

// commandShowDoc is `prm show -o json` of a command: its mailboxes (null
// when the command has none) and what fwctl lets through.
type commandShowDoc struct {
	Fwctl          []fwctlRule `json:"fwctl"`
	In             *showDoc    `json:"in"`
	Kind           string      `json:"kind"`
	Name           string      `json:"name"`
	Opcode         uint16      `json:"opcode"`
	Origin         string      `json:"origin"`
	Out            *showDoc    `json:"out"`
	Source         string      `json:"source"`
	SourceRevision string      `json:"source_revision"`
}

func (a *app) showCommand(t *target, path string, brief, noDiagram bool) error {
	c := t.cmd
	inPlan := t.in
	type side struct {
		plan   *prm.Plan
		leaves []prm.Leaf
	}
	sides := map[string]*side{}
	matched := 0
	for which, p := range map[string]*prm.Plan{"in": inPlan, "out": t.out} {
		if p == nil {
			continue
		}
		s := &side{plan: p}
		for _, l := range p.Leaves() {
			if prm.HasPrefixPath(l.Path, path) {
				s.leaves = append(s.leaves, l)
			}
		}
		matched += len(s.leaves)
		sides[which] = s
	}
	if path != "" && matched == 0 {
		return cmdutil.UsageErr("%s has no field under %q in its mailboxes; run 'cxray prm show %s' to see them", c.Name, path, c.Name)
	}
	if a.JSON() {
		out := commandShowDoc{Name: c.Name, Kind: "command", Opcode: c.Opcode, Origin: c.Origin,
			SourceRevision: t.db.Revision, Source: t.db.Source, Fwctl: fwctlRules(c)}
		if s := sides["in"]; s != nil {
			out.In = showJSON(t.db, &target{node: s.plan.Node, plan: s.plan}, s.leaves)
		}
		if s := sides["out"]; s != nil {
			out.Out = showJSON(t.db, &target{node: s.plan.Node, plan: s.plan}, s.leaves)
		}
		return a.WriteJSON(out)
	}
	w := a.Stdout
	fmt.Fprintf(w, "%s  command 0x%04x (%s)\n", c.Name, c.Opcode, c.Origin)
	switch rules := fwctlRules(c); {
	case len(rules) == 0:
		fmt.Fprintln(w, "fwctl: refused at every scope (the driver lets user space send only queries and a few settings)")
	default:
		for _, r := range rules {
			kind := "reads only"
			if r.Modifies {
				kind = "changes the device"
			}
			fmt.Fprintf(w, "fwctl: op_mod %s from scope %s; %s\n", r.OpMod, r.Scope, kind)
		}
	}
	for _, which := range []string{"in", "out"} {
		fmt.Fprintln(w)
		s := sides[which]
		if s == nil {
			fmt.Fprintf(w, "%s mailbox: no source cxray has describes it\n", which)
			continue
		}
		fmt.Fprintf(w, "%s mailbox: ", which)
		a.showTable(t.db, &target{node: s.plan.Node, plan: s.plan}, s.leaves, brief)
		if !noDiagram && len(s.leaves) > 0 {
			fmt.Fprintln(w)
			writeDiagram(w, s.plan, s.leaves, path)
		}
	}
	return nil
}

// searchCommands matches command names and the names and fields of the
// command interface's layouts (mlx5_ifc.h), as prm search hits; query is
// a regular expression, or literal text when it is not one.
func searchCommands(query string) ([]prmsearch.Hit, *cmdb.DB, error) {
	cdb, err := cmdb.Load()
	if err != nil {
		return nil, nil, fmt.Errorf("command database: %w", err)
	}
	re, err := regexp.Compile("(?i)" + query)
	if err != nil {
		re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(query))
	}
	var hits []prmsearch.Hit
	for _, c := range cdb.Commands {
		if re.MatchString(c.Name) {
			hits = append(hits, prmsearch.Hit{Kind: "command", Name: c.Name, Text: fmt.Sprintf("opcode 0x%x", c.Opcode),
				Hint: "cxray prm show " + c.Name})
		}
	}
	names := make([]string, 0, len(cdb.Layouts.Nodes))
	for n := range cdb.Layouts.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		// Inline members are nodes named "parent.member": report them
		// under the parent, with the member in the path.
		layout, prefix, inline := strings.Cut(name, ".")
		if !inline && re.MatchString(name) {
			hits = append(hits, prmsearch.Hit{Kind: "layout", Name: name, Hint: "cxray prm show " + name})
		}
		for _, f := range cdb.Layouts.Nodes[name].Fields {
			if f.Subnode == "" && re.MatchString(f.Name) {
				path := f.Name
				if inline {
					path = prefix + "." + f.Name
				}
				hits = append(hits, prmsearch.Hit{Kind: prmsearch.KindField, Register: layout, Path: path, Name: f.Name,
					Text: "command layout", Hint: "cxray prm show " + layout + " --field " + path})
			}
		}
	}
	return hits, cdb, nil
}

// leafAccess is the access kind to show: the register database's, or "-"
// for the command layouts, whose source (mlx5_ifc.h) gives none (which
// side writes a field follows from the mailbox, in or out).
func leafAccess(db *prm.DB, l prm.Leaf) string {
	if cdb, err := cmdb.Load(); err == nil && db == cdb.Layouts {
		return "-"
	}
	return l.AccessOrDefault().String()
}
