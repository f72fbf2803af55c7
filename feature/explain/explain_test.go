package explain

import (
	"flag"
	"fmt"
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

var update = flag.Bool("update", false, "rewrite testdata/expected.txt")

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

// fixtures are the inputs of every kind, written for these tests in each
// tool's format with our own values (mlxconfig-e-q.txt is mstconfig's
// output captured on the emulator, nvconf/testdata).
func fixtures(t testing.TB) []string {
	m, err := filepath.Glob("testdata/*.*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range m {
		if b := filepath.Base(f); b != "expected.txt" {
			out = append(out, b)
		}
	}
	return out
}

// summary is what the tests compare: each part's kind, lines and partial
// mark, and its findings as "severity category: what".
func summary(r *Report) []string {
	var out []string
	for _, p := range r.Parts {
		s := fmt.Sprintf("%s %d-%d", p.Kind, p.From, p.To)
		if p.Partial {
			s += " partial"
		}
		if p.Error != "" {
			s += " error"
		}
		out = append(out, s)
		for _, f := range p.Findings {
			w := f.What
			if len(w) > 70 {
				w = w[:70]
			}
			out = append(out, "  "+f.Severity+" "+f.Category+": "+w)
		}
	}
	return out
}

// Every fixture is detected as its kind and gives the findings
// testdata/expected.txt lists (go test -update rewrites it after an
// intended change; review the diff).
func TestFixtures(t *testing.T) {
	d := dbs(t)
	var got []string
	for _, name := range fixtures(t) {
		r, err := Explain(fixture(t, name), d)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, "# "+name)
		got = append(got, summary(r)...)
	}
	path := filepath.Join("testdata", "expected.txt")
	if *update {
		os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644)
	}
	want := strings.Split(strings.TrimRight(fixture(t, "expected.txt"), "\n"), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("explain of the fixtures (-expected.txt +now):\n%s", diff)
	}
}

// commands are command lines people paste above each fixture.
var commands = map[string]string{
	"devlink.txt": "devlink health show", "dmesg-aer.txt": "dmesg -T | grep -i -e mlx5 -e aer", "dmesg-cmd.txt": "dmesg | grep mlx5",
	"dmesg-cqe-mlx5e.txt": "journalctl -k --since today", "dmesg-cqe.txt": "dmesg", "dmesg-events.txt": "dmesg -w", "dmesg-health.txt": "dmesg",
	"dmesg-probe.txt": "dmesg", "ethtool-m.txt": "ethtool -m ens1f0np0", "flint-q.txt": "mstflint -d 41:00.0 q", "lspci.txt": "lspci -vv -s 41:00.0",
	"mlxconfig-e-q.txt": "mlxconfig -d /dev/mst/mt4129_pciconf0 -e q", "mlxlink.json": "mlxlink -d 41:00.0 -m -c --json", "mlxlink.txt": "mlxlink -d 41:00.0",
	"mlxup.txt": "mlxup --query", "rdma-qp.txt": "rdma res show qp", "sfputil.txt": "sudo sfputil show eeprom -d",
}

func kindsOf(r *Report) []string {
	var out []string
	for _, p := range r.Parts {
		out = append(out, p.Kind)
	}
	return out
}

// The variants people produce read as the same kinds: indented, CRLF,
// under a shell prompt and command line, with terminal colour codes, and
// cut at the end (which may be partial, never a hardware verdict).
func TestVariants(t *testing.T) {
	d := dbs(t)
	for _, name := range fixtures(t) {
		text := fixture(t, name)
		base, _ := Explain(text, d)
		want := kindsOf(base)
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		variants := map[string]string{
			"crlf":   strings.ReplaceAll(text, "\n", "\r\n"),
			"prompt": "root@gpu-node-07:~# " + commands[name] + "\n" + text + "root@gpu-node-07:~# \n",
			"ansi":   strings.Replace(strings.Replace(text, "0x", "\x1b[01;31m\x1b[K0x\x1b[m\x1b[K", 1), "mlx5", "\x1b[1mmlx5\x1b[0m", 1),
			"fence":  "see below\n```\n" + text + "```\nthanks\n",
		}
		if !strings.HasSuffix(name, ".json") {
			variants["indented"] = "    " + strings.Join(lines, "\n    ") + "\n"
		}
		for v, in := range variants {
			r, err := Explain(in, d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, kindsOf(r)); diff != "" {
				t.Errorf("%s %s: kinds (-plain +variant):\n%s\n%s", name, v, diff, strings.Join(summary(r), "\n"))
			}
		}
		// Cut at the end: the same kind (or none left), never a verdict on
		// hardware from a part called partial.
		cut := strings.Join(lines[:max(1, len(lines)*2/3)], "\n")
		cut = cut[:len(cut)-min(len(cut)/2, 7)]
		r, _ := Explain(cut, d)
		for _, p := range r.Parts {
			if p.Kind != want[0] && len(want) == 1 {
				t.Errorf("%s cut: read as %s, not %s", name, p.Kind, want[0])
			}
			checkPartial(t, name+" cut", p)
		}
	}
}

func checkPartial(t *testing.T, what string, p *Part) {
	t.Helper()
	if !p.Partial {
		return
	}
	for _, f := range p.Findings {
		if f.Category == CatHardware || f.Category == CatFirmware {
			t.Errorf("%s: a partial %s part gives a %s verdict: %s", what, p.Kind, f.Category, f.What)
		}
	}
}

// A ticket with several pastes, prose between them, is split into its
// parts, each explained, in order.
func TestMixedTicket(t *testing.T) {
	d := dbs(t)
	ticket := "Hi team, node gpu-node-07 lost RDMA last night. Here is dmesg:\n\n```\n" + fixture(t, "dmesg-cqe-mlx5e.txt") + fixture(t, "dmesg-aer.txt") + "```\n\n" +
		"The NV config (I cut some lines):\n\n$ sudo mlxconfig -d 41:00.0 -e q\n" + fixture(t, "mlxconfig-e-q.txt") +
		"\nAnd lspci:\n" + fixture(t, "lspci.txt") + "\nflint says:\n" + fixture(t, "flint-q.txt") + "\nand the optics:\n" + fixture(t, "ethtool-m.txt") +
		"\nThanks, Alex\n"
	r, err := Explain(ticket, d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{KindKernelLog, KindMlxconfig, KindLspci, KindFirmwareQuery, KindEthtoolModule}
	if diff := cmp.Diff(want, kindsOf(r)); diff != "" {
		t.Errorf("parts (-want +got):\n%s\n%s", diff, strings.Join(summary(r), "\n"))
	}
	if r.Unrecognised == 0 || !r.Problem() {
		t.Errorf("unrecognised %d, problem %v", r.Unrecognised, r.Problem())
	}
	// The kernel part holds both logs' events: the CQE and the two AER reports.
	classes := map[string]int{}
	for _, e := range r.Parts[0].Events {
		classes[e.Class]++
	}
	if classes[ClassCQE] != 1 || classes[ClassPCIe] != 3 {
		t.Errorf("kernel events by class: %v", classes)
	}
}

// A multi-device mlxconfig query is explained device by device, never as
// its first alone.
func TestMultiDeviceQuery(t *testing.T) {
	one := fixture(t, "mlxconfig-e-q.txt")
	two := strings.Replace(one, "0000:03:00.0", "0000:04:00.0", 1)
	r, err := Explain(one+two, dbs(t))
	if err != nil {
		t.Fatal(err)
	}
	devs := map[string]bool{}
	for _, p := range r.Parts {
		for _, f := range p.Findings {
			devs[f.Device] = true
		}
	}
	if !devs["0000:03:00.0"] || !devs["0000:04:00.0"] {
		t.Errorf("findings name devices %v; want both\n%s", devs, strings.Join(summary(r), "\n"))
	}
}
