package revdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
)

// The PRM revisions kept from mstflint's history, oldest first.
var revisions = []string{"0.51", "0.56", "0.57", "0.59", "0.61", "0.62", "0.64"}

var (
	dbMu    sync.Mutex
	dbCache = map[string]*prm.DB{}
)

// history loads a revision once per test binary, or skips the test when
// the files are not on this machine.
func history(t *testing.T, rev string) *prm.DB {
	t.Helper()
	dbMu.Lock()
	defer dbMu.Unlock()
	if db, ok := dbCache[rev]; ok {
		return db
	}
	path := fmt.Sprintf("%s/hca-ext-rev%s.adb", prmhistorytest.Require(t), rev)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("PRM history not available: %v", err)
	}
	db, err := adb.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dbCache[rev] = db
	return db
}

// The acceptance case: from Rev 0.57 to Rev 0.64 the NV configuration-item
// header (node config_item_ext) merged type_class and type_index into one
// 32-bit type, and gained rd_en, ovr_en and priority.
func TestConfigItem57to64(t *testing.T) {
	old, new := history(t, "0.57"), history(t, "0.64")
	for _, name := range []string{"config_item", "config_item_ext", "CONFIG_ITEM"} {
		rep, err := Diff(old, new, Options{Names: []string{name}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rep.Changed) != 1 || len(rep.AddedRegisters)+len(rep.RemovedRegisters) != 0 {
			t.Fatalf("%s: want one changed node, got %+v", name, rep)
		}
		c := rep.Changed[0]
		if !c.IsNode || c.Name != "config_item" || c.OldNode != "config_item_ext" || c.NewNode != "config_item_ext" || c.SizeChanged {
			t.Errorf("%s: header %+v", name, c)
		}
		checkConfigItem(t, "", c.Fields)
	}

	// The same header inside the NV registers, under its field name.
	rep, err := Diff(old, new, Options{Names: []string{"MNVDA", "MNVDI", "MNVGN"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changed) != 3 {
		t.Fatalf("want MNVDA, MNVDI, MNVGN changed, got %d", len(rep.Changed))
	}
	for _, c := range rep.Changed {
		var hdr []FieldChange
		for _, f := range c.Fields {
			if strings.HasPrefix(f.Path, "configuration_item_header.") {
				hdr = append(hdr, f)
			}
		}
		checkConfigItem(t, c.Name, hdr)
	}
}

func checkConfigItem(t *testing.T, reg string, fs []FieldChange) {
	t.Helper()
	pre := ""
	if reg != "" {
		pre = "configuration_item_header."
	}
	want := []string{
		"added " + pre + "rd_en",
		"added " + pre + "ovr_en",
		"added " + pre + "priority",
		"merged " + pre + "type [" + pre + "type_class+" + pre + "type_index]",
		"access " + pre + "host_id_valid", // RO -> INDEX, also true in the ADB
	}
	if got := lines(fs); !sameSet(got, want) {
		t.Fatalf("%s config_item changes:\n got  %q\n want %q", reg, got, want)
	}
	base := 0
	for _, f := range fs {
		if f.Kind == Merged {
			base = f.New.BitOffset - 32 // the header's start inside the register
		}
	}
	for _, f := range fs {
		switch f.Kind {
		case Merged:
			// 32 bits at the same place the two halves held: dword 1.
			if f.New.BitWidth != 32 || f.New.Type != "union" || f.Old != nil {
				t.Errorf("%s type: %+v", reg, f.New)
			}
			p := f.Parts
			if p[0].BitOffset != base+32 || p[0].BitWidth != 8 || p[1].BitOffset != base+40 || p[1].BitWidth != 24 {
				t.Errorf("%s merged parts: %+v", reg, p)
			}
		case Added:
			// ADB 0x0.24 (1 bit), 0x0.25 (1 bit), 0x0.28 (2 bits).
			want := map[string][2]int{"rd_en": {7, 1}, "ovr_en": {6, 1}, "priority": {2, 2}}[strings.TrimPrefix(f.Path, pre)]
			if f.New.BitOffset != base+want[0] || f.New.BitWidth != want[1] {
				t.Errorf("%s %s at bit %d width %d, want %d/%d", reg, f.Path, f.New.BitOffset, f.New.BitWidth, base+want[0], want[1])
			}
		}
	}
}

// Every pair of consecutive revisions diffs, renders, marshals, gives the
// same answer twice, and every change is consistent with its kind.
func TestConsecutiveRevisions(t *testing.T) {
	for i := 0; i+1 < len(revisions); i++ {
		a, b := revisions[i], revisions[i+1]
		t.Run(a+"-"+b, func(t *testing.T) {
			old, new := history(t, a), history(t, b)
			rep, err := Diff(old, new, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var txt bytes.Buffer
			if err := rep.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			j1, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Diff(old, new, Options{})
			if j2, _ := json.Marshal(again); !bytes.Equal(j1, j2) {
				t.Error("two runs disagree")
			}
			if n := len(rep.Changed) + rep.Unchanged; n != pairedRegisters(old, new) {
				t.Errorf("changed+unchanged = %d, want %d registers in both", n, pairedRegisters(old, new))
			}
			for _, c := range rep.Changed {
				for _, f := range c.Fields {
					checkConsistent(t, c.Name, f)
				}
			}
			t.Logf("%s → %s: %d added, %d removed, %d changed, %d unchanged; %v", old.Revision, new.Revision,
				len(rep.AddedRegisters), len(rep.RemovedRegisters), len(rep.Changed), rep.Unchanged, rep.CountByKind())
		})
	}
}

func pairedRegisters(a, b *prm.DB) int {
	inB := map[string]bool{}
	for _, r := range b.Registers {
		inB[strings.ToUpper(r.Name)] = true
	}
	n := 0
	for _, r := range a.Registers {
		if inB[strings.ToUpper(r.Name)] {
			n++
		}
	}
	return n
}

// checkConsistent checks what each kind promises.
func checkConsistent(t *testing.T, reg string, f FieldChange) {
	t.Helper()
	bad := func(why string) { t.Errorf("%s %s %s: %s (%+v)", reg, f.Kind, f.Path, why, f) }
	span := func(fi *FieldInfo) int {
		if fi.Type == "" && fi.Count > 1 {
			return fi.BitWidth * fi.Count
		}
		return fi.BitWidth
	}
	covers := func(whole *FieldInfo, parts []FieldInfo) bool {
		at := whole.BitOffset
		for _, p := range parts {
			if p.BitOffset != at {
				return false
			}
			at += span(&p)
		}
		return at == whole.BitOffset+span(whole)
	}
	if f.Path == "" || f.Detail == "" {
		bad("no path or detail")
	}
	switch f.Kind {
	case Added:
		if f.New == nil || f.Old != nil {
			bad("added needs New only")
		}
	case Removed:
		if f.Old == nil || f.New != nil {
			bad("removed needs Old only")
		}
	case Moved, Resized, Access, Enum, Retyped:
		if f.Old == nil || f.New == nil {
			bad("needs both sides")
		}
	case Renamed:
		if f.Old == nil || f.New == nil || f.OldPath == "" || f.OldPath == f.Path {
			bad("rename without two names")
		} else if f.Old.Type == "" && (f.Old.BitWidth != f.New.BitWidth || f.Old.Count != f.New.Count) {
			bad("renamed plain field changed width")
		}
	case Merged:
		if f.New == nil || len(f.Parts) < 2 || !covers(f.New, f.Parts) {
			bad("merged parts do not cover the new field exactly")
		}
	case Split:
		if f.Old == nil || len(f.Parts) < 2 || !covers(f.Old, f.Parts) {
			bad("split parts do not cover the old field exactly")
		}
	default:
		bad("unknown kind")
	}
	if f.Kind == Enum && f.Enum == nil {
		bad("enum change without details")
	}
}

// A revision diffed with itself has no changes.
func TestSelfDiff(t *testing.T) {
	for _, rev := range revisions {
		db := history(t, rev)
		rep, err := Diff(db, db, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Changed)+len(rep.AddedRegisters)+len(rep.RemovedRegisters) != 0 || rep.Unchanged != len(db.Registers) {
			t.Errorf("%s against itself: %d changed, %d added, %d removed", rev, len(rep.Changed), len(rep.AddedRegisters), len(rep.RemovedRegisters))
		}
	}
}

// The diff walks layouts itself (to keep containers); its leaves must be
// exactly what prm.Plan.Leaves lists, derived joined values aside.
func TestLeavesMatchPlan(t *testing.T) {
	for _, rev := range revisions {
		db := history(t, rev)
		for _, r := range db.Registers {
			p, err := db.RegisterPlan(r)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range p.Leaves() {
				if !l.Joined {
					want = append(want, fmt.Sprintf("%s@%d/%d*%d", l.Path, l.Bit, l.Width, l.Count))
				}
			}
			var got []string
			for _, l := range build(p).leafList() {
				got = append(got, fmt.Sprintf("%s@%d/%d*%d", l.path, l.bit, l.width, l.count))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %s: leaves differ from Plan.Leaves", rev, r.Name)
			}
		}
	}
}

// strip copies a database without any description, as the built-in
// database is.
func strip(t *testing.T, db *prm.DB) *prm.DB {
	t.Helper()
	nodes := make(map[string]*prm.Node, len(db.Nodes))
	for name, n := range db.Nodes {
		c := *n
		c.Descr = ""
		c.Fields = make([]*prm.Field, len(n.Fields))
		for i, f := range n.Fields {
			fc := *f
			fc.Descr = ""
			c.Fields[i] = &fc
		}
		nodes[name] = &c
	}
	regs := make([]*prm.Register, len(db.Registers))
	for i, r := range db.Registers {
		rc := *r
		regs[i] = &rc
	}
	out, err := prm.NewDB("stripped", db.Revision, nodes, regs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Descriptions play no part: a database without them diffs like the ADB.
func TestWithoutDescriptions(t *testing.T) {
	old, new := history(t, "0.57"), history(t, "0.64")
	bare := strip(t, old)
	if bare.HasDescriptions {
		t.Fatal("stripped copy claims descriptions")
	}
	rep, err := Diff(bare, old, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changed)+len(rep.AddedRegisters)+len(rep.RemovedRegisters) != 0 {
		t.Errorf("stripped 0.57 against 0.57: %d changed", len(rep.Changed))
	}
	withDescr, err := Diff(old, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	without, err := Diff(bare, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	without.OldSource = withDescr.OldSource
	a, _ := json.Marshal(withDescr)
	b, _ := json.Marshal(without)
	if !bytes.Equal(a, b) {
		t.Error("diff from a database without descriptions differs from the ADB's")
	}
}

// The ADB mstflint installs is Rev 0.57 (byte-identical to the history's
// hca-ext-rev0.57.adb); the diff must agree.
func TestInstalledIs057(t *testing.T) {
	if _, err := os.Stat(adb.MstflintPath); err != nil {
		t.Skip("mstflint's ADB is not installed")
	}
	inst, err := adb.LoadFile(adb.MstflintPath)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Revision != "Rev 0.57" {
		t.Skipf("installed ADB is %s", inst.Revision)
	}
	rep, err := Diff(history(t, "0.57"), inst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changed)+len(rep.AddedRegisters)+len(rep.RemovedRegisters) != 0 {
		t.Errorf("installed Rev 0.57 differs from the history copy: %d changed", len(rep.Changed))
	}
}
