package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEyeRealTime runs a ten-function GPU node in real time inside 'emu
// serve': a lane degraded through the control socket (link.lane_ber) is
// named by 'link --show_eye' on that function, in JSON and in the table
// with the same exit code (1), and no other function names a lane (exit
// 0). Then one port is forced to 200G over four lanes (50 Gb/s PAM4
// lanes, which SLRED scans), a lane degraded, and '--margin' scans two
// lanes' middle eyes for 10 s each on the wall clock: the degraded lane
// is named and the scan took at least the 20 s it asked for.
func TestEyeRealTime(t *testing.T) {
	requireNS(t)
	privateState(t)
	bin := cxrayBin(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "gpu-node.yaml")
	if err := os.WriteFile(file, []byte(gpuNode), 0o644); err != nil {
		t.Fatal(err)
	}
	bdfs := []string{}
	for _, n := range []string{"03", "04", "05", "06", "07"} {
		bdfs = append(bdfs, "0000:"+n+":00.0", "0000:"+n+":00.1")
	}
	sock := filepath.Join(dir, "ctl.sock")
	script := fmt.Sprintf(`
cx=%[1]s; out=%[2]s; s=%[3]s
$cx emu ctl --socket $s --bdf 0000:05:00.1 fault link.lane_ber=0,3e-5,0,0 > /dev/null || echo lane_ber >> $out/ctl.err
for b in %[4]s; do
  $cx link -d $b --show_eye -o json > $out/$b.json; echo $? > $out/$b.rc
  $cx link -d $b -e > $out/$b.txt; echo $? > $out/$b.txtrc
done
$cx link -d 0000:07:00.0 --speeds 200G_4X --link_mode_force --yes --force > $out/speeds.out 2>&1 || echo speeds >> $out/ctl.err
$cx emu ctl --socket $s --bdf 0000:07:00.0 fault link.lane_ber=0,0,0,3e-5 > /dev/null || echo lane_ber2 >> $out/ctl.err
start=$(date +%%s)
$cx link -d 0000:07:00.0 --margin --lanes 0,3 --eye_select MID --measure_time 10 --yes --force -o json > $out/margin.json 2> $out/margin.err; echo $? > $out/margin.rc
echo $(( $(date +%%s) - start )) > $out/margin.s
`, bin, dir, sock, strings.Join(bdfs, " "))
	out, errs, code := cli(t, "", "emu", "serve", "--scenario", file, "--socket", sock, "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("emu serve: exit %d\n%s\n%s", code, out, errs)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ctl.err")); err == nil {
		t.Fatalf("steps that did not do what they should: %s\n%s", b, read("speeds.out"))
	}
	for _, b := range bdfs {
		want := "0"
		if b == "0000:05:00.1" {
			want = "1"
		}
		var doc struct {
			Eye struct {
				Lanes []struct {
					Measured bool `json:"measured"`
				} `json:"lanes"`
				Verdicts []struct {
					Summary string `json:"summary"`
				} `json:"verdicts"`
			} `json:"eye"`
		}
		if err := json.Unmarshal([]byte(read(b+".json")), &doc); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		got := struct{ Rc, TxtRc, Named string }{read(b + ".rc"), read(b + ".txtrc"), ""}
		for _, v := range doc.Eye.Verdicts {
			got.Named += v.Summary
		}
		w := struct{ Rc, TxtRc, Named string }{want, want, ""}
		if want == "1" {
			w.Named = "the receive eye of lane 1 is much smaller than the other lanes' of port 1"
			if !strings.Contains(read(b+".txt"), "eye_degraded_lane: "+w.Named) {
				t.Errorf("%s table does not name lane 1:\n%s", b, read(b+".txt"))
			}
		}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", b, d)
		}
		if len(doc.Eye.Lanes) != 4 || !doc.Eye.Lanes[3].Measured {
			t.Errorf("%s: lanes %+v; want four measured", b, doc.Eye.Lanes)
		}
	}
	var m struct {
		Margin struct {
			LaneGbps float64 `json:"lane_gbps"`
			Results  []struct {
				Lane   int     `json:"lane"`
				Eye    string  `json:"eye"`
				Margin *uint64 `json:"margin"`
			} `json:"results"`
			Verdicts []struct {
				Summary string `json:"summary"`
			} `json:"verdicts"`
		} `json:"margin"`
	}
	if err := json.Unmarshal([]byte(read("margin.json")), &m); err != nil {
		t.Fatalf("margin: %v\n%s", err, read("margin.err"))
	}
	if rc := read("margin.rc"); rc != "1" || m.Margin.LaneGbps != 50 || len(m.Margin.Results) != 2 || len(m.Margin.Verdicts) != 1 ||
		!strings.Contains(m.Margin.Verdicts[0].Summary, "lane 3 ") {
		t.Errorf("margin: exit %s, %+v\n%s", rc, m.Margin, read("margin.err"))
	}
	for _, r := range m.Margin.Results {
		if r.Eye != "MID" || r.Margin == nil {
			t.Errorf("margin lane %d: eye %q, margin %v; want the MID eye measured", r.Lane, r.Eye, r.Margin)
		}
	}
	if s, _ := strconv.Atoi(read("margin.s")); s < 20 {
		t.Errorf("the margin scan of two eyes at 10 s each took %d s of wall time", s)
	}
}

// The kernel backend has no SLRG or SLRED: --show_eye and --margin are
// exit 2 in both modes, saying to use the register path, and nothing is
// written.
func TestEyeKernel(t *testing.T) {
	withKernelFixture(t)
	for _, args := range [][]string{{"--show_eye"}, {"--margin", "--yes", "--force"}} {
		for _, mode := range []string{"table", "json"} {
			_, errs, code := cli(t, "", append([]string{"link", "-d", "kernel:mlx5_0", "-o", mode}, args...)...)
			if code != 2 || !strings.Contains(errs, "kernel backend does not reach; use -d with a PCI address") {
				t.Errorf("%v -o %s: exit %d, %q; want 2 naming the register path", args, mode, code, errs)
			}
		}
	}
}
