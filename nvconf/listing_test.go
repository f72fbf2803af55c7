package nvconf_test

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/nvconf/rawfile"
)

func TestParams(t *testing.T) {
	db := load(t)
	ps := db.Params(regexp.MustCompile(`PSN|^LINK_TYPE`), false)
	got := map[string]string{}
	for _, p := range ps {
		got[p.Name] = strings.Join([]string{p.TLV, p.Class, p.Type, p.Allowed, p.Max, p.TypeDword}, " ")
	}
	want := map[string]string{
		"LOG_TX_PSN_WINDOW": "nv_sw_offload_conf Global UNSIGNED 0..63 63 0x0000010a",
		"LINK_TYPE_P<n>":    "nv_vpi_link_type Port ENUM IB(1), ETH(2)  0x01010012",
	}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("%s: %q, want %q", n, got[n], w)
		}
	}
	for _, p := range ps {
		if p.Name == "LINK_TYPE_P<n>" && cmp.Diff(map[string]uint64{"IB": 1, "ETH": 2}, p.Values) != "" {
			t.Errorf("values %v", p.Values)
		}
	}
	// Sorted by name; internal fields only when asked.
	all := db.Params(nil, false)
	if len(all) < 300 {
		t.Errorf("%d parameters", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name > all[i].Name {
			t.Fatalf("not sorted: %s before %s", all[i-1].Name, all[i].Name)
		}
	}
	internal := db.Params(nil, true)
	caps := 0
	for _, p := range internal {
		if p.Capability {
			caps++
		}
	}
	if len(internal) <= len(all) || caps == 0 || len(internal) != db.ParamCount() {
		t.Errorf("%d with internal fields (%d capabilities), %d without, %d in all", len(internal), caps, len(all), db.ParamCount())
	}
	if d := nvconf.DescriptionText(`First line.\; Second line. \;`); d != "First line.\nSecond line." {
		t.Errorf("%q", d)
	}
	if n := nvconf.NamePattern(db.ParamByMlxName("LINK_TYPE")); n != "LINK_TYPE_P<n>" {
		t.Errorf("%s", n)
	}
}

// Differences names each TLV two configurations hold differently, with
// the parameters that differ.
func TestDifferences(t *testing.T) {
	db := load(t)
	pci := nvconf.Instance{TLV: db.TLV("nv_global_pci_conf")}
	link2 := nvconf.Instance{TLV: db.TLV("nv_vpi_link_type"), Port: 2}
	sw := nvconf.Instance{TLV: db.TLV("nv_sw_offload_conf")}
	mk := func(in nvconf.Instance, version int, set map[string]uint64) nvconf.RawTLV {
		data := make([]byte, in.TLV.Size)
		for name, v := range set {
			p := db.ParamByMlxName(name)
			if p == nil || p.TLV != in.TLV {
				t.Fatalf("%s has no %s", in.TLV.Name, name)
			}
			if err := p.Set(data, 0, v); err != nil {
				t.Fatal(err)
			}
		}
		return nvconf.RawTLV{Header: nvconf.Header{Type: in.Type(), Version: version}, Data: data}
	}
	a := []nvconf.RawTLV{mk(pci, 0, map[string]uint64{"NUM_OF_VFS": 8}), mk(link2, 0, map[string]uint64{"LINK_TYPE": 1}), mk(sw, 0, nil)}
	b := []nvconf.RawTLV{mk(pci, 0, map[string]uint64{"NUM_OF_VFS": 64}), mk(sw, 1, nil)}
	got := db.Differences(rawfile.Compare(a, b))
	want := []nvconf.Difference{
		{TLV: "nv_global_pci_conf", Type: "0x00000080", In: "both", Changes: []string{"NUM_OF_VFS: 8 -> 64"}},
		{TLV: "nv_sw_offload_conf", Type: "0x0000010a", In: "both", Changes: []string{"version 0 -> 1, or bytes outside the named parameters differ"}},
		{TLV: "nv_vpi_link_type (port 2)", Type: "0x01020012", In: "a", Changes: []string{"LINK_TYPE_P2: IB(1) -> (not stored)"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("differences (-want +got):\n%s", d)
	}
	if got := db.Differences(rawfile.Compare(a, a)); len(got) != 0 {
		t.Errorf("same: %v", got)
	}
}

// The facts file holds everything a DB needs: written and read back, the
// same parameters.
func TestFactsRoundTrip(t *testing.T) {
	db := load(t)
	var b bytes.Buffer
	if err := nvconf.WriteFacts(&b, db, []string{"a test header"}); err != nil {
		t.Fatal(err)
	}
	back, err := nvconf.ReadFacts("test", b.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(back.TLVs) != len(db.TLVs) || back.ParamCount() != db.ParamCount() || cmp.Diff(db.MlxNames(), back.MlxNames()) != "" {
		t.Errorf("%d TLVs %d params, want %d %d", len(back.TLVs), back.ParamCount(), len(db.TLVs), db.ParamCount())
	}
	for _, tl := range db.TLVs {
		bt := back.TLV(tl.Name)
		if bt == nil || bt.Size != tl.Size || bt.Class != tl.Class || bt.ID != tl.ID || len(bt.Params) != len(tl.Params) {
			t.Fatalf("%s: %+v", tl.Name, bt)
		}
		for i, p := range tl.Params {
			q := bt.Params[i]
			if p.Name != q.Name || p.MlxName != q.MlxName || p.Type != q.Type || p.MinVal != q.MinVal || p.MaxVal != q.MaxVal || p.Rule != q.Rule ||
				p.Dependency != q.Dependency || p.ValidBit != q.ValidBit || p.ArrayLen != q.ArrayLen || len(p.Enum) != len(q.Enum) {
				t.Fatalf("%s.%s: %+v, want %+v", tl.Name, p.Name, q, p)
			}
		}
	}
	// Written again, byte for byte.
	var again bytes.Buffer
	nvconf.WriteFacts(&again, back, []string{"a test header"})
	if again.String() != b.String() {
		t.Error("the facts file does not reproduce")
	}
}

// The built-in facts are what the generator makes from the installed
// mstflint database.
func TestGenerateFacts(t *testing.T) {
	const installed = "/usr/share/mstflint/mlxconfig_dbs/mlxconfig_host.db"
	if _, err := os.Stat(installed); err != nil {
		t.Skipf("SKIP: mstflint's NV database %s is not installed (apt-get install mstflint)", installed)
	}
	got, err := nvconf.GenerateFacts(installed)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != builtin.Facts() {
		t.Error("nvconf/builtin/host.nvfacts differs from what GenerateFacts makes of the installed database; run go generate ./nvconf/builtin")
	}
	if _, err := nvconf.GenerateFacts("/nonexistent.db"); err == nil {
		t.Error("a missing database generated facts")
	}
}
