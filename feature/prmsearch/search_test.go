package prmsearch

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	nvbuiltin "github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/adb"
	"github.com/cxray/cxray/prm/builtin"
)

func sources(t *testing.T) Sources {
	t.Helper()
	db, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	nv, err := nvbuiltin.Load()
	if err != nil {
		t.Fatal(err)
	}
	return Sources{DB: db, NV: nv}
}

func history(t *testing.T) func() []*prm.DB {
	files, _ := filepath.Glob(filepath.Join(prmhistorytest.Require(t), "hca-ext-rev*.adb"))
	sort.Strings(files) // 0.51 ... 0.64 sort as text
	return func() []*prm.DB {
		var out []*prm.DB
		for _, f := range files {
			db, err := adb.LoadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, db)
		}
		return out
	}
}

func hasHit(res *Result, kind, reg, name, text string) bool {
	for _, h := range res.Hits {
		if h.Kind == kind && (reg == "" || h.Register == reg || h.Path == reg) && strings.EqualFold(h.Name, name) && strings.Contains(h.Text, text) {
			return true
		}
	}
	return false
}

func TestNVParameter(t *testing.T) {
	res := Search(sources(t), "log_tx_psn_window")
	if !hasHit(res, KindNVParam, "nv_sw_offload_conf", "LOG_TX_PSN_WINDOW", "bits 0x4.16 size 0x0.6 (6 bits)") {
		t.Errorf("LOG_TX_PSN_WINDOW: %+v", res.Hits)
	}
	if res.Hits[0].Hint != "cxray config query LOG_TX_PSN_WINDOW -d DEV" {
		t.Errorf("hint %q", res.Hits[0].Hint)
	}
}

// The words of a name in any order: MODULE_TEMP and module_temp find the
// module temperature of PDDR's module page, with a --path hint.
func TestWords(t *testing.T) {
	for _, q := range []string{"MODULE_TEMP", "module_temp", "temp module"} {
		res := Search(sources(t), q)
		if len(res.Hits) == 0 || res.Hits[0].Path != "page_data.pddr_module_info_ext.temperature" {
			t.Fatalf("%s: first hit %+v", q, res.Hits)
		}
		if h := res.Hits[0]; h.Hint != "cxray prm show PDDR --path page_data.pddr_module_info_ext" || !strings.Contains(h.Text, "when page_select == Module_info_page") {
			t.Errorf("%s: %+v", q, h)
		}
		if len(res.Suggestions) != 0 {
			t.Errorf("%s: suggestions despite hits: %v", q, res.Suggestions)
		}
	}
	// SENSOR_TEMP: MTMP's fields carry the words between them.
	res := Search(sources(t), "SENSOR_TEMP")
	if !hasHit(res, KindRegister, "MTMP", "MTMP", "sensor_index") {
		t.Errorf("SENSOR_TEMP: %+v", res.Hits)
	}
}

func TestKinds(t *testing.T) {
	s := sources(t)
	cases := []struct{ q, kind, reg, name string }{
		{"MTMP", KindRegister, "MTMP", "MTMP"},
		{"node_guid", KindField, "PGUID", "node_guid"},
		{"up_once", KindEnum, "PAOS", "up_once"},
		{"nv_global_pci_conf", KindNVTLV, "nv_global_pci_conf", "nv_global_pci_conf"},
		{"SRIOV_EN", KindNVParam, "nv_global_pci_conf", "SRIOV_EN"},
	}
	for _, c := range cases {
		res := Search(s, c.q)
		if !hasHit(res, c.kind, c.reg, c.name, "") {
			t.Errorf("%s: no %s hit in %+v", c.q, c.kind, res.Hits)
		}
		if res.Hits[0].score != scoreExact {
			t.Errorf("%s: best hit not exact: %+v", c.q, res.Hits[0])
		}
	}
	// One hit for the GUID array and its joined value.
	n := 0
	for _, h := range Search(s, "node_guid").Hits {
		if h.Register == "PGUID" && h.Path == "node_guid" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("node_guid: %d hits for PGUID node_guid", n)
	}
}

func TestSuggestions(t *testing.T) {
	res := Search(sources(t), "MTPM")
	if len(res.Suggestions) == 0 || res.Suggestions[0] != "MTMP" {
		t.Errorf("MTPM: %v", res.Suggestions)
	}
	if res.Found() {
		t.Errorf("MTPM: a suggestion is not a match: %+v", res)
	}
	res = Search(sources(t), "zzzqqq")
	if res.Found() {
		t.Errorf("zzzqqq: %+v", res)
	}
}

func TestExplain(t *testing.T) {
	s := sources(t)
	for name, want := range map[string]string{
		"NODE_GUID":         "node_guid is a field of PGUID (cxray prm show PGUID --path node_guid)",
		"LOG_TX_PSN_WINDOW": "is an NV configuration parameter in nv_sw_offload_conf",
		"up_once":           "up_once is a value of PAOS",
		"zzzqqq":            "",
	} {
		got := Explain(s, name)
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// Names of other revisions: added later, renamed, removed.
func TestHistory(t *testing.T) {
	s := sources(t)
	s.History = history(t)
	cases := map[string]string{
		"plane_ind":           "added in Rev 0.59 (not in Rev 0.57); this database is Rev 0.57",
		"force_kr_frames_cap": "renamed in Rev 0.57 to force_lt_frames_cap",
		"reset_level":         "renamed in Rev 0.56 to reset_trigger",
	}
	for q, want := range cases {
		res := Search(s, q)
		found := false
		for _, h := range res.Hits {
			if h.Kind == KindHistory && strings.Contains(h.Text, want) && strings.HasPrefix(h.Hint, "cxray prm diff ") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no history hit %q in %+v", q, want, res.Hits)
		}
	}
	// Dropped by Rev 0.59, back at its place under a new name in 0.61: a
	// rename, seen from Rev 0.64, which lacks the old name.
	revs := s.History()
	s64 := s
	s64.DB = revs[len(revs)-1]
	want := "in Rev 0.51 to Rev 0.57; removed in Rev 0.59; renamed in Rev 0.61 to page_data.pddr_link_down_info_page_ext.last_raw_ber_coef"
	res := Search(s64, "last_ber_mantissa")
	if len(res.Hits) != 1 || res.Hits[0].Text != want || !strings.HasSuffix(res.Hits[0].Hint, "hca-ext-rev0.61.adb PDDR") || !res.Found() {
		t.Errorf("last_ber_mantissa from Rev 0.64: %+v, want %q", res.Hits, want)
	}
	// A name of the current database needs no history.
	called := false
	s.History = func() []*prm.DB { called = true; return nil }
	Search(s, "MTMP")
	if called {
		t.Error("history loaded for a name the database has")
	}
}

func TestEditDistanceTranspositions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"MTPM", "MTMP", 1}, {"MTPM", "CWTPM", 2}, {"abc", "abc", 0}, {"ab", "ba", 1}, {"abc", "ca", 3}, {"", "abc", 3}} {
		if got := prm.EditDistance(c.a, c.b); got != c.d {
			t.Errorf("%s/%s: %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
