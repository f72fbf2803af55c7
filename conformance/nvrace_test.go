package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// nvRaceScript runs `cxray config set` with a long --settle in the
// background, waits until mstconfig sees cxray's value, then has mstconfig
// write the same TLV: a neighbour of cxray's parameter in round n (cxray's
// change holds), cxray's own parameter in round o (it is undone).
const nvRaceScript = `
race() { # not n: run (the prelude) sets n
	r=$1 mine=$2 theirs=$3
	cxray config set -d $BDF $mine --yes --settle 15s --timeout 60s -o json >"$OUT/set$r.out" 2>"$OUT/set$r.err" &
	p=$!
	want=${mine#*=} pname=${mine%%=*}
	i=0
	until mstconfig -d $BDF q $pname 2>/dev/null | grep -Eq "^ +$pname +$want *$"; do
		i=$((i+1)); [ $i -ge 40 ] && break; sleep 0.2
	done
	echo $i >"$OUT/polls$r"
	TMO=120 run mst$r mstconfig -d $BDF -y set $theirs
	kill -0 $p 2>/dev/null && echo running >"$OUT/alive$r"
	wait $p
	echo $? >"$OUT/set$r.rc"
}
race n NUM_OF_VFS=16 SRIOV_EN=False
race o NUM_OF_VFS=12 NUM_OF_VFS=4
TMO=120 run final mstconfig -d $BDF q NUM_OF_VFS SRIOV_EN
`

// TestConfigSetRacesMstconfig: cxray's NV lock orders cxray's writers
// only; mstconfig takes none. After its verified write cxray waits
// --settle and reads the TLV again (issue 26.2): when mstconfig changed a
// neighbour of cxray's parameter in the same TLV, it warns and exits 0;
// when mstconfig undid cxray's own change, it warns that the change was
// undone and exits 1 (the JSON lists the parameter under
// changed_after_write with ours true). Both tools exit 0 on their own
// writes. Bounded: each race ends with cxray's settle (15 s).
func TestConfigSetRacesMstconfig(t *testing.T) {
	need(t, "mstconfig")
	s := emuRun(t, "cx7.yaml", fmt.Sprintf("BDF=%s\n%s", fbdf, nvRaceScript), 10*time.Minute)
	type setOut struct {
		Written      bool `json:"written"`
		ChangedAfter []struct {
			TLV       string `json:"tlv"`
			Parameter string `json:"parameter"`
			Wrote     string `json:"wrote"`
			Now       string `json:"now"`
			Ours      bool   `json:"ours"`
		} `json:"changed_after_write"`
	}
	for _, c := range []struct {
		round, param, wrote, now string
		ours                     bool
		rc                       string
	}{
		{"n", "SRIOV_EN", "True(1)", "False(0)", false, "0"},
		{"o", "NUM_OF_VFS", "12", "4", true, "1"},
	} {
		if polls := strings.TrimSpace(readFile(s, "polls"+c.round)); polls == "40" {
			t.Fatalf("round %s: mstconfig never saw cxray's value\n%s", c.round, readFile(s, "set"+c.round+".err"))
		}
		if strings.TrimSpace(readFile(s, "alive"+c.round)) != "running" {
			t.Fatalf("round %s: cxray had ended before mstconfig's write (mstconfig polled %s times): the race was not set up\n%s",
				c.round, strings.TrimSpace(readFile(s, "polls"+c.round)), readFile(s, "set"+c.round+".err"))
		}
		s.ok(t, "mst"+c.round)
		rc, errs := strings.TrimSpace(readFile(s, "set"+c.round+".rc")), readFile(s, "set"+c.round+".err")
		if rc != c.rc {
			t.Errorf("round %s: cxray config set exited %s, want %s\n%s", c.round, rc, c.rc, errs)
		}
		var out setOut
		if err := json.Unmarshal([]byte(readFile(s, "set"+c.round+".out")), &out); err != nil {
			t.Fatalf("round %s: %v\n%s", c.round, err, readFile(s, "set"+c.round+".out"))
		}
		found := false
		for _, d := range out.ChangedAfter {
			if d.Parameter == c.param {
				found = true
				if d.TLV != "nv_global_pci_conf" || d.Wrote != c.wrote || d.Now != c.now || d.Ours != c.ours {
					t.Errorf("round %s: changed_after_write %+v, want %s %s -> %s ours %v", c.round, d, c.param, c.wrote, c.now, c.ours)
				}
			}
		}
		if !out.Written || !found {
			t.Errorf("round %s: %+v does not report %s changed after the write", c.round, out, c.param)
		}
		want := "another writer changed nv_global_pci_conf " + c.param + " after cxray wrote it"
		if !strings.Contains(errs, want) || !strings.Contains(errs, "does not cover mstconfig") {
			t.Errorf("round %s: stderr does not say %q:\n%s", c.round, want, errs)
		}
		if c.ours != strings.Contains(errs, "this set's change was undone") {
			t.Errorf("round %s: stderr says the wrong thing about cxray's own change:\n%s", c.round, errs)
		}
	}
	final := s.ok(t, "final").stdout
	for _, want := range []string{"NUM_OF_VFS", "4", "SRIOV_EN", "False(0)"} {
		if !strings.Contains(final, want) {
			t.Errorf("mstconfig's final query lacks %q:\n%s", want, final)
		}
	}
}
