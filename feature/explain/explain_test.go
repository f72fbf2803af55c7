package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf/builtin"
	"github.com/cxray/cxray/prm"
	promb "github.com/cxray/cxray/prm/builtin"
	"github.com/cxray/cxray/prm/cmdb"
)

func dbs(t testing.TB) Databases {
	t.Helper()
	cdb, err := cmdb.Load()
	if err != nil {
		t.Fatal(err)
	}
	nv, err := builtin.Load()
	if err != nil {
		t.Fatal(err)
	}
	var reg *prm.DB
	if r, err := promb.Load(); err == nil {
		reg = r
	}
	return Databases{Registers: reg, Commands: cdb, NV: nv}
}

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// summary is what a test compares: each part's kind, and its findings as
// "category: what" (first 60 characters).
func summary(r *Report) []string {
	var out []string
	for _, p := range r.Parts {
		out = append(out, "kind "+p.Kind)
		for _, f := range p.Findings {
			w := f.What
			if len(w) > 60 {
				w = w[:60]
			}
			out = append(out, "  "+f.Severity+" "+f.Category+": "+w)
		}
	}
	return out
}

func TestFixtures(t *testing.T) {
	d := dbs(t)
	for _, name := range []string{"dmesg-cmd.txt", "dmesg-cqe.txt", "dmesg-cqe-mlx5e.txt", "dmesg-health.txt", "dmesg-probe.txt", "dmesg-events.txt", "dmesg-aer.txt",
		"ethtool-m.txt", "mlxlink.txt", "mlxlink.json", "lspci.txt", "sfputil.txt", "devlink.txt", "rdma-qp.txt", "flint-q.txt", "mlxup.txt"} {
		r, err := Explain(fixture(t, name), d)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", name, strings.Join(summary(r), "\n"))
		for _, p := range r.Parts {
			for _, e := range p.Events {
				t.Logf("   event %d %s %s %s: %s | %v", e.Line, e.Class, e.Severity, e.Category, e.Meaning, e.Fields)
			}
			t.Logf("   facts %v notes %v err %q", p.Facts, p.Notes, p.Error)
		}
	}
	_ = cmp.Diff
}
