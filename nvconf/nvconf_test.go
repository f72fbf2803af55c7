package nvconf_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/nvconf/expr"
	"github.com/cxray/cxray/nvconf/tlv"
	prmbuiltin "github.com/cxray/cxray/prm/builtin"
)

func load(t testing.TB) *nvconf.DB {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func param(t testing.TB, db *nvconf.DB, tlv, name string) *nvconf.Param {
	t.Helper()
	tl := db.TLV(tlv)
	if tl == nil {
		t.Fatalf("no TLV %s", tlv)
	}
	p := tl.Param(name)
	if p == nil {
		t.Fatalf("no %s.%s", tlv, name)
	}
	return p
}

// Type dwords of frequently used parameters of mstflint's mlxconfig_host.db
// (and one module TLV).
func TestTypeDword(t *testing.T) {
	db := load(t)
	cases := []struct {
		in   nvconf.Instance
		want uint32
	}{
		{nvconf.Instance{TLV: db.TLV("nv_global_pci_conf")}, 0x00000080},
		{nvconf.Instance{TLV: db.TLV("nv_vpi_link_type"), Port: 1}, 0x01010012},
		{nvconf.Instance{TLV: db.TLV("nv_vpi_link_type"), Port: 2}, 0x01020012},
		{nvconf.Instance{TLV: db.TLV("nv_keep_link_up"), Port: 1}, 0x01010190},
		{nvconf.Instance{TLV: db.TLV("nv_pf_pci_conf")}, 0x03000080},
		{nvconf.Instance{TLV: db.TLV("nv_rom_boot_conf1")}, 0x03000221},
		{nvconf.Instance{TLV: db.TLV("nv_pf_pci_conf"), Host: 1, Function: 2}, 0x03040880},
		{nvconf.Instance{TLV: db.TLV("nv_pci_conf")}, 0x07000080},
		{nvconf.Instance{TLV: db.TLV("nv_sw_offload_conf")}, 0x0000010a},
		{nvconf.Instance{TLV: db.TLV("nv_module_split"), Module: 1}, 0x09004004},
	}
	for _, c := range cases {
		got, err := nvconf.TypeDword(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: 0x%08x %v, want 0x%08x", c.in, got, err, c.want)
			continue
		}
		back, ok := db.InstanceOf(got)
		if !ok || back.TLV != c.in.TLV || back.Port != c.in.Port || back.Module != c.in.Module || back.Host != c.in.Host || back.Function != c.in.Function {
			t.Errorf("0x%08x splits to %+v", got, back)
		}
	}
	if _, err := nvconf.TypeDword(nvconf.Instance{TLV: db.TLV("nv_vpi_link_type"), Port: 300}); err == nil {
		t.Error("port 300 fits no type dword")
	}
}

// Positions (MSB-first bit from the start of the TLV data) of parameters of
// mstflint's mlxconfig_host.db, LOG_TX_PSN_WINDOW among them.
func TestParamPositions(t *testing.T) {
	db := load(t)
	cases := []struct {
		tlv, name  string
		bit, width int
	}{
		{"nv_global_pci_conf", "sriov_en", 32, 1},
		{"nv_global_pci_conf", "total_vfs", 48, 16},
		{"nv_global_pci_conf", "num_pfs", 40, 8},
		{"nv_global_pci_conf", "num_pf_msix", 74, 10},
		{"nv_global_pci_conf", "num_vf_msix", 64, 10},
		{"nv_global_pci_conf", "log_pf_uar_bar_size", 90, 6},
		{"nv_global_pci_conf", "sriov_valid", 0, 1},
		{"nv_vpi_link_type", "default_link_type", 28, 2},
		{"nv_roce_cc_ecn", "cnp_dscp", 530, 6},
		{"nv_lldp_nb_conf", "lldp_nb_dcbx", 4, 1},
		{"nv_pci_conf", "advanced_pci_settings", 0, 1},
		{"nv_sw_offload_conf", "log_tx_psn_win", 42, 6},
		{"nv_global_pci_conf_2", "max_acc_outstanding_read_byte", 0, 16},
		{"nv_global_pci_cap", "max_total_bar", 128, 32},
	}
	for _, c := range cases {
		p := param(t, db, c.tlv, c.name)
		if p.Bit(0) != c.bit || p.ElemBits() != c.width {
			t.Errorf("%s.%s at %d w%d, want %d w%d", c.tlv, c.name, p.Bit(0), p.ElemBits(), c.bit, c.width)
		}
	}
	// Writing a field touches only its bits.
	p := param(t, db, "nv_sw_offload_conf", "log_tx_psn_win")
	data := make([]byte, 8)
	if err := p.Set(data, 0, 63); err != nil {
		t.Fatal(err)
	}
	if got := tlv.Dwords(data); got != "0x00000000 0x003f0000" {
		t.Errorf("LOG_TX_PSN_WINDOW=63 gives %s", got)
	}
	if err := p.Set(data, 0, 64); err == nil {
		t.Error("64 fits 6 bits?")
	}
}

// Array elements are in big-endian order: element i of 8-bit elements is
// byte start+i. (mstconfig swaps bytes inside each dword and walks each
// dword's elements backwards; the two cancel.)
func TestArrayOrder(t *testing.T) {
	db := load(t)
	p := param(t, db, "nv_host_chaining_conf", "log_num_descriptor")
	if !p.IsArray() || p.ArrayLen != 8 || p.ElemBits() != 8 {
		t.Fatalf("%+v", p)
	}
	data := make([]byte, p.TLV.Size)
	for i := 0; i < 8; i++ {
		if err := p.Set(data, i, uint64(0x10+i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := tlv.Dwords(data[4:12]); got != "0x10111213 0x14151617" {
		t.Errorf("elements 0..7 at bytes 4..11: %s", got)
	}
	// 16-bit elements: element i is the half-word start+2i.
	tl := &nvconf.TLV{Name: "t16", ID: 1, Size: 8, Params: []*nvconf.Param{{Name: "a", OffsetText: "0x0.16", SizeText: "0x8.0", Type: nvconf.TypeUnsigned, ArrayLen: 4}}}
	db16, err := nvconf.NewDB("test", []*nvconf.TLV{tl}, false)
	if err != nil || len(db16.Warnings) > 0 {
		t.Fatal(err, db16.Warnings)
	}
	q := db16.TLV("t16").Param("a")
	d := make([]byte, 8)
	for i := 0; i < 4; i++ {
		_ = q.Set(d, i, uint64(0xa0+i))
	}
	if got := tlv.Dwords(d); got != "0x00a000a1 0x00a200a3" {
		t.Errorf("16-bit elements: %s", got)
	}
}

func TestValues(t *testing.T) {
	db := load(t)
	lt := param(t, db, "nv_vpi_link_type", "default_link_type")
	for in, want := range map[string]uint64{"ETH": 2, "eth": 2, "2": 2, "IB(1)": 1, "0x1": 1} {
		if v, err := lt.Parse("LINK_TYPE_P1", in); err != nil || v != want {
			t.Errorf("LINK_TYPE %q: %d %v", in, v, err)
		}
	}
	for _, bad := range []string{"FOO", "3", "", "-1"} {
		_, err := lt.Parse("LINK_TYPE_P1", bad)
		var ve *nvconf.ValueError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "IB(1), ETH(2)") {
			t.Errorf("LINK_TYPE %q: %v (want a refusal naming IB(1), ETH(2))", bad, err)
		}
	}
	if lt.Format(2) != "ETH(2)" || lt.Format(3) != "3" {
		t.Errorf("format %s %s", lt.Format(2), lt.Format(3))
	}
	sr := param(t, db, "nv_global_pci_conf", "sriov_en")
	for in, want := range map[string]uint64{"True": 1, "false": 0, "1": 1, "0": 0} {
		if v, err := sr.Parse("SRIOV_EN", in); err != nil || v != want {
			t.Errorf("SRIOV_EN %q: %d %v", in, v, err)
		}
	}
	if _, err := sr.Parse("SRIOV_EN", "maybe"); err == nil || !strings.Contains(err.Error(), "True(1), False(0)") {
		t.Errorf("SRIOV_EN=maybe: %v", err)
	}
	if sr.Format(1) != "True(1)" || sr.Format(0) != "False(0)" {
		t.Error(sr.Format(1), sr.Format(0))
	}
	vfs := param(t, db, "nv_global_pci_conf", "total_vfs")
	if _, err := vfs.Parse("NUM_OF_VFS", "65536"); err == nil || !strings.Contains(err.Error(), "0..65535") {
		t.Errorf("NUM_OF_VFS=65536: %v", err)
	}
	if _, err := vfs.Parse("NUM_OF_VFS", "True"); err == nil || !strings.Contains(err.Error(), "not a boolean") {
		t.Errorf("NUM_OF_VFS=True: %v", err)
	}
	if v, err := vfs.Parse("NUM_OF_VFS", "0x10"); err != nil || v != 16 {
		t.Errorf("0x10: %d %v", v, err)
	}
	mp := param(t, db, "nv_module_power", "max_power")
	if v, err := mp.Parse("X", "1f"); err != nil || v != 0x1f || mp.Format(v) != "0x1f" {
		t.Errorf("BINARY 1f: %d %v", v, err)
	}
}

func TestResolve(t *testing.T) {
	db := load(t)
	l := nvconf.Layout{Ports: 2, Modules: 2}
	r, err := db.Resolve("link_type_p2", l)
	if err != nil || r.Param.Name != "default_link_type" || r.Inst.Port != 2 || r.Name() != "LINK_TYPE_P2" {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := db.Resolve("LRO_LOG_TIMEOUT0", l); err != nil || r.Param.Name != "lro_log_timeout0" {
		t.Errorf("a name ending in a digit: %+v %v", r, err)
	}
	if r, err := db.Resolve("HOST_CHAINING_DESCRIPTORS[3]", l); err != nil || r.Index != 3 || r.Name() != "HOST_CHAINING_DESCRIPTORS[3]" {
		t.Errorf("array element: %+v %v", r, err)
	}
	for name, want := range map[string]string{
		"LINK_TYPE":                     "LINK_TYPE_P1 or LINK_TYPE_P2",
		"LINK_TYPE_P3":                  "ports 1..2",
		"NUM_OF_VF":                     "did you mean NUM_OF_VFS",
		"SRIOV_EN_P1":                   "not a port parameter",
		"HOST_CHAINING_DESCRIPTORS[8]":  "out of range",
		"SRIOV_EN[0]":                   "not an array",
		"nv_global_pci_conf.no_such":    "has no field",
		"completely_unknown_parameter1": "show-params",
	} {
		_, err := db.Resolve(name, l)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	if r, err := db.Resolve("nv_global_pci_cap.max_vfs_per_pf", l); err != nil || !r.Param.TLV.Cap {
		t.Errorf("tlv.field: %+v %v", r, err)
	}
}

// Every expression of both real databases parses.
func TestDatabaseExpressions(t *testing.T) {
	dbs := []*nvconf.DB{load(t)}
	hist, _ := prmhistorytest.Dir()
	if newer, err := nvconf.LoadSQLite(filepath.Join(hist, "mlxconfig_host-2026-05.db")); err == nil {
		dbs = append(dbs, newer)
	} else if !os.IsNotExist(errors.Unwrap(err)) {
		t.Logf("the 2026 database is not here: %v", err)
	}
	for _, db := range dbs {
		n := 0
		for _, tl := range db.TLVs {
			for _, p := range tl.Params {
				for _, e := range []string{p.Dependency, p.MinVal, p.MaxVal, p.Rule} {
					if e == "" || strings.EqualFold(e, "ignore_dependency") {
						continue
					}
					n++
					if _, err := expr.Parse(e); err != nil {
						t.Errorf("%s: %s.%s: %v", db.Source, tl.Name, p.Name, err)
					}
				}
				if p.TempVars != "" {
					if _, err := expr.ParseTempVars(p.TempVars); err != nil {
						t.Errorf("%s: %s.%s temp_vars: %v", db.Source, tl.Name, p.Name, err)
					}
				}
			}
		}
		if n < 300 {
			t.Errorf("%s: only %d expressions", db.Source, n)
		}
	}
}

func TestHeaderCodec(t *testing.T) {
	pdb, err := prmbuiltin.Load()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := tlv.NewHeaderCodec(pdb, "MNVDA")
	if err != nil {
		t.Fatal(err)
	}
	if hc.DataOffset() != 12 {
		t.Errorf("MNVDA data at %d", hc.DataOffset())
	}
	buf := make([]byte, 16)
	h := nvconf.Header{Length: 256, WriterID: nvconf.WriterMlxconfig, Mode: nvconf.ModeNext, Type: 0x01010012}
	if err := hc.EncodeHeader(buf, h); err != nil {
		t.Fatal(err)
	}
	// mstconfig's GET header as seen on the wire (mstconfig q against the
	// emulator, conformance tests),
	// without over_en, which Rev 0.57 does not name.
	if got := tlv.Dwords(buf[:8]); got != "0x00090100 0x01010012" {
		t.Errorf("header %s", got)
	}
	back := hc.DecodeHeader(buf)
	if back.Length != 256 || back.WriterID != 9 || back.Type != 0x01010012 || back.Mode != nvconf.ModeNext {
		t.Errorf("%+v", back)
	}
	gn, err := tlv.NewHeaderCodec(pdb, "MNVGN")
	if err != nil || gn.DataOffset() != 0x1c || gn.HeaderOffset() != 0x10 {
		t.Fatalf("MNVGN: %v %d %d", err, gn.DataOffset(), gn.HeaderOffset())
	}
	if hc.WriterName(9) != "ICMD_mlxconfig" {
		t.Error(hc.WriterName(9))
	}
}
