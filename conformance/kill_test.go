package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// killCommands are the cxray commands the kill test interrupts: each spends
// most of its time in register accesses, so a random signal usually lands
// while it holds the gateway or the ICMD semaphore.
var killCommands = []string{
	"cxray module -d " + fbdf,
	"cxray reg get PDDR -d " + fbdf + " --index page_select=0",
	"cxray status -d " + fbdf,
	"cxray module -d " + fbdf + " -o json",
}

var killSignals = []string{"INT", "TERM", "HUP", "KILL"}

// killScript runs the rounds: start a command, wait a random time within
// how long that command takes here (timed once first; $2 of round is the
// variable holding it), send the signal, wait for the command, note the gateway semaphore, then
// run the next commands. After SIGINT/SIGTERM/SIGHUP mstreg goes first: it
// must find the device free without any help from cxray. After SIGKILL,
// which nothing can catch, cxray goes first: it must recognise what the
// killed process left held, release it and go on; mstreg then shows that
// nothing is left.
const killScript = `
rnd() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }
semval() { dd if=$CONFIG bs=4 skip=$SEMDW count=1 2>/dev/null | od -An -tx4 | tr -d ' '; }
round() {
	i=$1 sig=$2 dur=$3; shift 3
	ms=$(( $(rnd) % dur ))
	s=$(date +%s%N)
	"$@" >"$OUT/kill$i.out" 2>"$OUT/kill$i.err" &
	p=$!
	sleep $(awk "BEGIN { print $ms / 1000 }")
	if kill -s $sig $p 2>/dev/null; then sent=1; else sent=0; fi
	wait $p
	rc=$?
	echo "sig=$sig delay_ms=$ms sent=$sent rc=$rc ran_ms=$(( ($(date +%s%N) - s) / 1000000 )) sem=$(semval)" >"$OUT/kill$i.sum"
	if [ $sig = KILL ]; then
		TMO=30 run next_cxray$i cxray reg get PAOS -d $BDF
		TMO=60 run next_mstreg$i $MSTREG
	else
		TMO=60 run next_mstreg$i $MSTREG
		TMO=30 run next_cxray$i cxray reg get PAOS -d $BDF
	fi
}
`

// killRound is one round's record.
type killRound struct {
	Signal   string
	Command  string
	DelayMS  int
	Sent     bool // the command was still running when the signal came
	RC       int  // the killed command's exit status
	Sem      uint32
	Notice   string // what the next cxray released, if anything
	NextOK   bool
	NextMS   [2]int // cxray, mstreg
	NextFail string
}

// TestKilledCommandsLeaveTheDeviceUsable: cxray commands are killed with
// SIGINT, SIGTERM, SIGHUP and SIGKILL at random points under `cxray emu
// serve`; after each, the next cxray and the next mstreg must read the
// device within their own deadlines (cxray 10 s, mstreg's own retry
// budget). A signal that can be caught must leave nothing held (mstreg runs
// next, before any cxray could clean up). A SIGKILL may leave the gateway
// or ICMD semaphore held; the next cxray must release it (it was recorded
// in the semaphore witness) and say so. CXRAY_KILL_ROUNDS=N sets the
// rounds per signal (8, or 3 with -short); CXRAY_KILL_REPORT=FILE writes
// the rounds as JSON (docs/reliability.md is made from it).
func TestKilledCommandsLeaveTheDeviceUsable(t *testing.T) {
	need(t, "mstreg", "awk")
	perSignal := 8
	if testing.Short() {
		perSignal = 3
	}
	if v, err := strconv.Atoi(os.Getenv("CXRAY_KILL_ROUNDS")); err == nil && v > 0 {
		perSignal = v
	}
	var script strings.Builder
	fmt.Fprintf(&script, "BDF=%s\nCONFIG=/sys/bus/pci/devices/%s/config\nSEMDW=%d\nMSTREG=%q\n", fbdf, fbdf, (0xC0+0xC)/4, mstregPAOS)
	script.WriteString(killScript)
	for k, c := range killCommands {
		fmt.Fprintf(&script, "run cal%d %s\nD%d=$(( $(cat \"$OUT/cal%d.ms\") + 1 ))\n", k, c, k, k)
	}
	var rounds []killRound
	for i := 0; i < perSignal*len(killSignals); i++ {
		k := (i / len(killSignals)) % len(killCommands)
		r := killRound{Signal: killSignals[i%len(killSignals)], Command: killCommands[k]}
		rounds = append(rounds, r)
		fmt.Fprintf(&script, "round %d %s $D%d %s\n", i, r.Signal, k, r.Command)
	}
	start := time.Now()
	s := emuServe(t, "cx7.yaml", script.String(), 30*time.Minute)
	elapsed := time.Since(start)
	for k := range killCommands {
		c := s.ok(t, fmt.Sprintf("cal%d", k))
		t.Logf("%s takes %d ms here", killCommands[k], c.ms)
	}

	stats := map[string]map[string]int{}
	for i := range rounds {
		r := &rounds[i]
		sum, err := os.ReadFile(filepath.Join(s.out, fmt.Sprintf("kill%d.sum", i)))
		if err != nil {
			t.Fatalf("round %d left no summary: %v (runner: %s %s)", i, err, s.stdout, s.stderr)
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(string(sum)) {
			k, v, _ := strings.Cut(f, "=")
			kv[k] = v
		}
		r.DelayMS, _ = strconv.Atoi(kv["delay_ms"])
		r.Sent = kv["sent"] == "1"
		r.RC, _ = strconv.Atoi(kv["rc"])
		sem, _ := strconv.ParseUint(kv["sem"], 16, 32)
		r.Sem = uint32(sem)
		nc, nm := s.step(t, fmt.Sprintf("next_cxray%d", i)), s.step(t, fmt.Sprintf("next_mstreg%d", i))
		r.NextMS = [2]int{nc.ms, nm.ms}
		// cxray's own deadline is 10 s; the margin is for a loaded
		// machine (process start, the FUSE server's turn).
		r.NextOK = nc.rc == 0 && nm.rc == 0 && time.Duration(nc.ms)*time.Millisecond < 40*time.Second
		if i := strings.Index(nc.stderr, "notice: "); i >= 0 {
			r.Notice = strings.TrimSpace(nc.stderr[i+len("notice: "):])
		}
		st := stats[r.Signal]
		if st == nil {
			st = map[string]int{}
			stats[r.Signal] = st
		}
		st["rounds"]++
		if r.Sent {
			st["killed"]++
		}
		if r.Sem != 0 {
			st["gateway held after"]++
		}
		if r.Notice != "" {
			st["released by next cxray"]++
		}
		if !r.NextOK {
			st["next failed"]++
			r.NextFail = fmt.Sprintf("%s\n%s", nc, nm)
			t.Errorf("round %d (%s %s at %d ms, exit %d): the next commands did not use the device:\n%s\n%s",
				i, r.Signal, r.Command, r.DelayMS, r.RC, nc, nm)
			continue
		}
		if r.Signal != "KILL" && r.Notice != "" {
			t.Errorf("round %d: after SIG%s the next cxray had to release something: %s", i, r.Signal, r.Notice)
		}
		if r.Signal != "KILL" && r.Sent && r.RC != 0 && !strings.Contains(readFile(s, fmt.Sprintf("kill%d.err", i)), "interrupted") {
			t.Logf("round %d: SIG%s made %q exit %d: %s", i, r.Signal, r.Command, r.RC, firstLine(readFile(s, fmt.Sprintf("kill%d.err", i))))
		}
	}
	var lines []string
	for _, sig := range killSignals {
		st := stats[sig]
		lines = append(lines, fmt.Sprintf("SIG%-4s %2d rounds, %2d killed mid-command, gateway semaphore held right after %2d, released by the next cxray %2d, next commands failed %d",
			sig, st["rounds"], st["killed"], st["gateway held after"], st["released by next cxray"], st["next failed"]))
	}
	sort.Strings(lines)
	t.Logf("%d rounds in %v (load %s):\n%s", len(rounds), elapsed.Round(time.Second), loadavg(), strings.Join(lines, "\n"))
	if path := os.Getenv("CXRAY_KILL_REPORT"); path != "" {
		b, _ := json.MarshalIndent(map[string]any{"rounds": rounds, "elapsed_s": elapsed.Seconds(), "load": loadavg()}, "", "  ")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Error(err)
		}
	}
}

func readFile(s *session, name string) string {
	b, _ := os.ReadFile(filepath.Join(s.out, name))
	return string(b)
}
