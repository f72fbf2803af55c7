package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinkFlapRealTime flaps one port of a ten-function GPU node through
// 'emu ctl fault link.flap=...' while 'emu serve' runs in real time, and
// takes another's partner away and back: 'link --counters' names each
// reason and blame, in JSON and in the table with the same exit code (1),
// and a port nobody touched records nothing (exit 0).
func TestLinkFlapRealTime(t *testing.T) {
	requireNS(t)
	privateState(t)
	bin := cxrayBin(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "gpu-node.yaml")
	if err := os.WriteFile(file, []byte(gpuNode), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "ctl.sock")
	script := fmt.Sprintf(`
cx=%[1]s; out=%[2]s; s=%[3]s
$cx emu ctl --socket $s --bdf 0000:05:00.1 fault link.flap=Hi_SER_or_Hi_BER > /dev/null || echo flap >> $out/ctl.err
$cx emu ctl --socket $s --bdf 0000:06:00.0 fault link.partner=absent > /dev/null || echo absent >> $out/ctl.err
sleep 1
$cx emu ctl --socket $s --bdf 0000:06:00.0 fault link.partner=present > /dev/null || echo present >> $out/ctl.err
$cx emu ctl --socket $s --bdf 0000:07:00.0 fault link.flap=Gremlins > /dev/null 2>&1 && echo gremlins >> $out/ctl.err
for b in 0000:05:00.1 0000:06:00.0 0000:03:00.0; do
  $cx link -d $b --counters -o json > $out/$b.json; echo $? > $out/$b.rc
  $cx link -d $b --show_counters > $out/$b.txt; echo $? > $out/$b.txtrc
done
`, bin, dir, sock)
	out, errs, code := cli(t, "", "emu", "serve", "--scenario", file, "--socket", sock, "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("emu serve: exit %d\n%s\n%s", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ctl.err")); err == nil {
		t.Errorf("emu ctl steps that did not do what they should: %s", b)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	type ev struct {
		Recorded bool   `json:"recorded"`
		Blame    string `json:"down_blame"`
		Local    string `json:"local_reason"`
		Verdict  *struct {
			Category string `json:"category"`
		} `json:"verdict"`
	}
	type res struct {
		Rc, TxtRc string
		Down      ev
		Category  string
		Text      bool
	}
	cases := map[string]res{
		"0000:05:00.1": {Rc: "1", TxtRc: "1", Down: ev{Recorded: true, Blame: "Local_phy", Local: "Hi_SER_or_Hi_BER"}, Category: "signal quality", Text: true},
		"0000:06:00.0": {Rc: "1", TxtRc: "1", Down: ev{Recorded: true, Blame: "Remote_phy", Local: "Block_Lock_loss"}, Category: "link partner", Text: true},
		"0000:03:00.0": {Rc: "0", TxtRc: "0"},
	}
	for bdf, want := range cases {
		var doc struct {
			LinkDown []ev `json:"link_down"`
		}
		if err := json.Unmarshal([]byte(read(bdf+".json")), &doc); err != nil || len(doc.LinkDown) != 1 {
			t.Fatalf("%s: %v %+v", bdf, err, doc)
		}
		g := res{Rc: read(bdf + ".rc"), TxtRc: read(bdf + ".txtrc"), Down: doc.LinkDown[0]}
		if g.Down.Verdict != nil {
			g.Category = g.Down.Verdict.Category
		}
		g.Down.Verdict = nil
		txt := read(bdf + ".txt")
		g.Text = strings.Contains(txt, "Last reason (local)") && want.Down.Local != "" && strings.Contains(txt, want.Down.Local)
		if !want.Text && !strings.Contains(txt, "none recorded") {
			t.Errorf("%s: table does not say none recorded:\n%s", bdf, txt)
		}
		if d := cmp.Diff(want, g); d != "" {
			t.Errorf("%s (-want +got):\n%s", bdf, d)
		}
	}
}
