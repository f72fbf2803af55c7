package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/fwimage/mfa2"
	"github.com/cxray/cxray/internal/linuxabi"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/prm/source"
)

// emuImage writes an image with `cxray emu image`.
func emuImage(t *testing.T, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fw.bin")
	if _, errs, code := cli(t, "", append([]string{"emu", "image", "--out", path}, args...)...); code != 0 {
		t.Fatalf("emu image %v: exit %d: %s", args, code, errs)
	}
	return path
}

type fwQueryDevice struct {
	Running     struct{ Version string }  `json:"running"`
	Stored      *struct{ Version string } `json:"stored"`
	Pending     *struct{ Version string } `json:"pending"`
	UpdateState string                    `json:"update_state"`
	Notes       []string                  `json:"notes"`
}

func fwState(t *testing.T, dev string) (running, pending, state string) {
	t.Helper()
	out, errs, code := cli(t, "", "fw", "query", "-d", dev, "-o", "json")
	if code != 0 {
		t.Fatalf("fw query -d %s: exit %d: %s", dev, code, errs)
	}
	var q fwQueryDevice
	mustJSON(t, out, &q)
	if q.Pending != nil {
		pending = q.Pending.Version
	}
	return q.Running.Version, pending, q.UpdateState
}

// `fw query FILE` reads what `emu image` writes, in both output modes, and
// agrees with `mstflint -i FILE query` on every field both show.
func TestFwQueryFile(t *testing.T) {
	img := emuImage(t, "--profile", "cx6dx-2p100g", "--version", "22.41.1000", "--released", "2024-06-30")
	out, errs, code := cli(t, "", "fw", "query", img)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	js, _, jcode := cli(t, "", "fw", "query", img, "-o", "json")
	if jcode != code {
		t.Errorf("json exit %d, table %d", jcode, code)
	}
	var f struct {
		Kind  string
		Image struct {
			Version, PSID string
			ReleaseDate   string `json:"release_date"`
			HWIDs         []int  `json:"hw_ids"`
		}
	}
	mustJSON(t, js, &f)
	got := []any{f.Kind, f.Image.Version, f.Image.PSID, f.Image.ReleaseDate, f.Image.HWIDs}
	if diff := cmp.Diff([]any{"FS4", "22.41.1000", "MT_0000000359", "30.6.2024", []int{0x212}}, got); diff != "" {
		t.Errorf("fw query -o json: kind, version, PSID, date, HW IDs (-want +got):\n%s", diff)
	}
	if _, err := exec.LookPath("mstflint"); err != nil {
		t.Skip("*** SKIPPING the mstflint comparison: mstflint is not installed")
	}
	mf, err := exec.Command("mstflint", "-i", img, "q").CombinedOutput()
	if err != nil {
		t.Fatalf("mstflint -i q: %v\n%s", err, mf)
	}
	fields := func(s string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(s, "\n") {
			k, v, ok := strings.Cut(l, ":")
			if ok {
				m[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
		return m
	}
	ours, theirs := fields(out), fields(string(mf))
	for _, k := range []string{"Image type", "FW Version", "FW Release Date", "Product Version", "PSID", "Security Ver"} {
		if ours[k] != theirs[k] {
			t.Errorf("%s: cxray %q, mstflint %q", k, ours[k], theirs[k])
		}
	}
}

// What cannot be an image is exit 2 with a message that says why, in both
// output modes; an MFA2 package lists its PSIDs.
func TestFwQueryFileRefusals(t *testing.T) {
	img := emuImage(t, "--version", "28.41.1")
	b, _ := os.ReadFile(img)
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.bin")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	junk := filepath.Join(dir, "junk.bin")
	os.WriteFile(junk, bytes.Repeat([]byte("not firmware\r\n"), 100), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fw", "query", cut}, "cut short"},
		{[]string{"fw", "query", junk}, "not an FS4 firmware image"},
		{[]string{"fw", "query"}, "give an image file"},
		{[]string{"fw", "query", img, "-d", "emu"}, "not both"},
		{[]string{"fw", "update", "-d", "emu", cut, "--yes"}, "cut short"},
	} {
		for _, o := range []string{"table", "json"} {
			_, errs, code := cli(t, "", append(c.args, "-o", o)...)
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("%v -o %s: exit %d, stderr %q; want exit 2 saying %q", c.args, o, code, errs, c.want)
			}
		}
	}
	pkg := emuImage(t, "--version", "28.41.1", "--mfa2")
	out, errs, code := cli(t, "", "fw", "query", pkg)
	if code != 0 || !regexp.MustCompile(`MT_0000000834\s+28\.41\.0001`).MatchString(out) {
		t.Errorf("fw query MFA2: exit %d\n%s%s", code, out, errs)
	}
}

// The whole lifecycle on the emulator: an image is checked (dry run: no
// write), installed (pending in fw query and status), a wrong one is
// refused with the exit code of its kind, and a reset runs the new image.
func TestFwUpdateAndReset(t *testing.T) {
	privateState(t)
	img := emuImage(t, "--version", "28.41.1000")
	run := func(want int, args ...string) string {
		t.Helper()
		out, errs, code := cli(t, "", args...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errs)
		}
		return out + errs
	}
	run(0, "fw", "update", "-d", "emu", img, "--dry-run")
	run(0, "fw", "update", "-d", "emu", img, "--dry-run", "-o", "json")
	if r, p, _ := fwState(t, "emu"); r != "28.39.1010" || p != "" {
		t.Fatalf("after dry runs: running %s pending %q", r, p)
	}
	if out := run(2, "fw", "update", "-d", "emu", img); !strings.Contains(out, "add --yes") {
		t.Errorf("without --yes or a terminal: %s", out)
	}
	run(0, "fw", "update", "-d", "emu", img, "--yes")
	if r, p, s := fwState(t, "emu"); r != "28.39.1010" || p != "28.41.1000" || s != "IDLE" {
		t.Errorf("after update: running %s pending %q state %s", r, p, s)
	}
	if out := run(0, "status", "-d", "emu"); !strings.Contains(out, "28.39.1010 (28.41.1000 pending)") {
		t.Errorf("status does not show the pending firmware:\n%s", out)
	}
	// Wrong images: another board's (exit 2, before a write); one the
	// adapter's signature check refuses (exit 3).
	run(2, "fw", "update", "-d", "emu", emuImage(t, "--version", "28.42.1", "--psid", "MT_0000000838"), "--yes")
	if out := run(3, "fw", "update", "-d", "emu", emuImage(t, "--version", "28.42.1", "--signature", "bad"), "--yes", "-o", "json"); !strings.Contains(out, `"exit_code":3`) {
		t.Errorf("bad signature, json: %s", out)
	}
	if out := run(3, "fw", "update", "-d", "emu", emuImage(t, "--version", "28.42.1", "--signature", "none"), "--yes"); !strings.Contains(out, "not signed") {
		t.Errorf("unsigned: %s", out)
	}
	if _, p, _ := fwState(t, "emu"); p != "28.41.1000" {
		t.Errorf("refused images changed the stored one: pending %q", p)
	}
	run(2, "fw", "update", "-d", "emu", emuImage(t, "--version", "28.1.1"), "--yes")

	out := run(0, "fw", "reset", "-d", "emu", "--dry-run")
	for _, want := range []string{"3 (pcie_link_toggle)", "Dry run: no reset sent", "driver"} {
		if !strings.Contains(out, want) {
			t.Errorf("reset dry run lacks %q:\n%s", want, out)
		}
	}
	run(2, "fw", "reset", "-d", "emu", "--level", "9")
	run(3, "fw", "reset", "-d", "emu", "--level", "1", "--yes")
	if r, _, _ := fwState(t, "emu"); r != "28.39.1010" {
		t.Errorf("dry run or refused reset changed the running firmware: %s", r)
	}
	js := run(0, "fw", "reset", "-d", "emu", "--yes", "-o", "json")
	var rep struct{ RunningBefore, RunningAfter string }
	mustJSON(t, strings.ReplaceAll(strings.ReplaceAll(js, "running_before", "RunningBefore"), "running_after", "RunningAfter"), &rep)
	if rep.RunningBefore != "28.39.1010" || rep.RunningAfter != "28.41.1000" {
		t.Errorf("reset: running %s -> %s, want 28.39.1010 -> 28.41.1000", rep.RunningBefore, rep.RunningAfter)
	}
	if r, p, _ := fwState(t, "emu"); r != "28.41.1000" || p != "" {
		t.Errorf("after reset: running %s pending %q", r, p)
	}
	run(0, "emu", "reset", "emu")
	if r, _, _ := fwState(t, "emu"); r != "28.39.1010" {
		t.Errorf("emu reset did not restore the shipped image: running %s", r)
	}
}

// After `cxray fw update` mstflint, unmodified, reads the new version as
// the flash's and the old one as running (under `cxray emu run`, in real
// time).
func TestFwUpdateSeenByMstflint(t *testing.T) {
	requireNS(t)
	if _, err := exec.LookPath("mstflint"); err != nil {
		t.Skip("*** SKIPPING: mstflint is not installed")
	}
	privateState(t)
	img := emuImage(t, "--version", "28.41.1000")
	if out, errs, code := cli(t, "", "fw", "update", "-d", "emu", img, "--yes"); code != 0 {
		t.Fatalf("update: exit %d %s%s", code, out, errs)
	}
	out, errs, code := cli(t, "", "emu", "run", "--", "mstflint", "-d", "0000:03:00.0", "q")
	if code != 0 {
		t.Fatalf("mstflint q: exit %d %s%s", code, out, errs)
	}
	for _, re := range []string{`FW Version:\s+28\.41\.1000`, `FW Version\(Running\):\s+28\.39\.1010`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("mstflint q lacks %s:\n%s", re, out)
		}
	}
}

// A cxray killed (SIGKILL: no clean-up) or stopped (SIGINT) at points
// through an update leaves the adapter usable: the running image intact,
// after SIGINT the handle released, after SIGKILL a handle that
// --force-release takes over; the stored image is the old or the new,
// never a mix. Real time: each register access of the firmware takes 3 ms.
func TestFwUpdateKilled(t *testing.T) {
	privateState(t)
	bin := cxrayBin(t)
	scen := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(scen, []byte("devices:\n  - profile: cx7-2p400g\n    faults:\n      slow_icmd: 3ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dev := "emu:" + scen
	img := emuImage(t, "--version", "28.41.1000")
	for i, c := range []struct {
		sig   syscall.Signal
		after time.Duration
	}{{syscall.SIGKILL, 300 * time.Millisecond}, {syscall.SIGINT, 600 * time.Millisecond}, {syscall.SIGKILL, 1200 * time.Millisecond}, {syscall.SIGINT, 1800 * time.Millisecond}, {syscall.SIGKILL, 2500 * time.Millisecond}, {syscall.SIGKILL, 3300 * time.Millisecond}} {
		cmd := exec.Command(bin, "fw", "update", "-d", dev, img, "--yes", "--force-release", "--allow-downgrade", "--force")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(c.after)
		cmd.Process.Signal(c.sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("case %d: still running 60 s after %v", i, c.sig)
		}
		var ee *exec.ExitError
		finished := err == nil
		if !finished && !errors.As(err, &ee) {
			t.Fatalf("case %d: %v", i, err)
		}
		r, p, state := fwState(t, dev)
		if r != "28.39.1010" {
			t.Errorf("case %d (%v after %v): running %s; the running image must not change", i, c.sig, c.after, r)
		}
		if p != "" && p != "28.41.1000" {
			t.Errorf("case %d: pending %q is neither the old nor the new image", i, p)
		}
		if c.sig == syscall.SIGINT && !finished && state != "IDLE" {
			t.Errorf("case %d: after SIGINT (exit %v, %s) the update state is %s; want the handle released (IDLE)", i, err, errb.String(), state)
		}
		// Whatever happened, the next update takes over and works.
		if out, errs, code := cli(t, "", "fw", "update", "-d", dev, img, "--yes", "--force-release", "--force"); code != 0 {
			t.Fatalf("case %d: update after %v: exit %d %s%s", i, c.sig, code, out, errs)
		}
		if _, p, s := fwState(t, dev); p != "28.41.1000" || s != "IDLE" {
			t.Errorf("case %d: after the next update: pending %q state %s", i, p, s)
		}
		cli(t, "", "emu", "reset", dev)
	}
}

// fw query -d and fw reset --query give the same versions and levels with
// every PRM revision in the history, on every function of an example
// scenario, in both output modes with the same exit code. MROQ is read
// where the database has it and the firmware advertises it; the emulator
// does not (its own database is Rev 0.57), which the answer says.
func TestFwQueryEveryRevisionAndFunction(t *testing.T) {
	files := append([]string{"builtin"}, prmhistorytest.Files(t)...)
	bdfs := []string{"0000:03:00.0", "0000:03:00.1", "0000:04:00.0", "0000:04:00.1"}
	for _, adb := range files {
		for _, bdf := range bdfs {
			dev := matrixScenario + "@" + bdf
			js, code := matrixRun(t, adb, "fw", "query", "-d", dev)
			var q fwQueryDevice
			mustJSON(t, js, &q)
			// The example's first adapter has an image pending a reset.
			stored := q.Running.Version
			if q.Pending != nil {
				stored = q.Pending.Version
			}
			// Rev 0.51 does not lay out MCQI's data: no stored version, and
			// a note that says so.
			old := strings.Contains(adb, "rev0.51")
			if q.Running.Version == "" || q.UpdateState != "IDLE" || !old && (q.Stored == nil || q.Stored.Version != stored) || old && (q.Stored != nil || len(q.Notes) == 0) {
				t.Errorf("--adb %s %s: %s", adb, bdf, js)
			}
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			_, errs, tcode := cli(t, "", "--adb", adb, "fw", "query", "-d", dev)
			if tcode != code {
				t.Errorf("--adb %s %s: table exit %d, json %d: %s", adb, bdf, tcode, code, errs)
			}
			js, _ = matrixRun(t, adb, "fw", "reset", "-d", dev, "--query")
			var r struct {
				Levels []string `json:"levels"`
				NoMROQ string   `json:"mroq_unavailable"`
			}
			mustJSON(t, js, &r)
			if diff := cmp.Diff([]string{"0 (live_patch)", "3 (pcie_link_toggle)", "4 (perst_reboot)"}, r.Levels); diff != "" || r.NoMROQ == "" {
				t.Errorf("--adb %s %s: reset levels (-want +got):\n%s; MROQ note %q", adb, bdf, diff, r.NoMROQ)
			}
		}
	}
}

// On the kernel backend (no register path) fw query, reset --query and an
// update through the registers (--via mcc) are exit 3 with a message that
// says why, in both output modes; an update's file is checked first (a bad
// file is exit 2 whatever the device), and on the devlink path (the
// default where the driver is bound) an image for another PSID is refused
// before anything is sent.
func TestFwOnKernelBackend(t *testing.T) {
	k := withKernelFixture(t)
	img := emuImage(t, "--version", "28.41.1")
	for _, args := range [][]string{{"fw", "query", "-d", "kernel:mlx5_0"}, {"fw", "update", "-d", "kernel:mlx5_0", img, "--yes", "--via", "mcc"}, {"fw", "reset", "-d", "kernel:mlx5_0", "--query"}} {
		for _, o := range []string{"table", "json"} {
			_, errs, code := cli(t, "", append(args, "-o", o)...)
			if code != 3 || len(strings.TrimSpace(errs)) == 0 {
				t.Errorf("%v -o %s: exit %d, stderr %q; want exit 3 with the reason", args, o, code, errs)
			}
		}
	}
	if _, errs, code := cli(t, "", "fw", "update", "-d", "kernel:mlx5_0", "/nonexistent.bin", "--yes"); code != 2 {
		t.Errorf("missing file on the kernel backend: exit %d %s", code, errs)
	}
	if _, errs, code := cli(t, "", "fw", "update", "-d", "kernel:mlx5_0", img, "--yes"); code != 2 || !strings.Contains(errs, "PSID") || len(k.FlashRequests()) != 0 {
		t.Errorf("image of another PSID via devlink: exit %d %s; %d flash requests", code, errs, len(k.FlashRequests()))
	}
}

// Where the mlx5 driver is bound, fw update and fw reset go through devlink
// (auto): the image is wrapped in an MFA2 package, staged in the firmware
// folder and named in DEVLINK_CMD_FLASH_UPDATE; the driver's progress is
// read from the config group; the staged file is removed; the reset is
// reload fw_activate and the stored version runs. The driver's refusals
// (its extended ack) are exit 3 naming the reason, in both output modes;
// --via devlink where no driver is bound (the emulator) is exit 3 too, and
// a --via that names nothing is exit 2.
func TestFwViaDevlink(t *testing.T) {
	k := withKernelFixture(t)
	const h = "pci/0000:c1:00.0"
	k.Flash = map[string]kerneltest.FlashScript{h: {Stored: "28.41.1000", Status: []kerneltest.FlashNote{
		{Msg: "Preparing to flash", Component: "fw.mgmt"}, {Msg: "Downloading", Component: "fw.mgmt", Done: 65536, Total: 65536}, {Msg: "Activating"}}}}
	k.Reload = map[string]kerneltest.ReloadScript{h: {}}
	img := emuImage(t, "--version", "28.41.1000", "--psid", "MT_0000000838")
	raw, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := cli(t, "", "fw", "update", "-d", "kernel:mlx5_0", img, "--yes", "-o", "json")
	if code != 0 {
		t.Fatalf("update via devlink: exit %d %s", code, errs)
	}
	var res struct {
		Via, Pending, From string
	}
	mustJSON(t, out, &res)
	if res.Via != "devlink" || res.Pending != "28.41.1000" || res.From != "28.39.1002" {
		t.Errorf("update result %+v", res)
	}
	reqs := k.FlashRequests()
	if len(reqs) != 1 || reqs[0].Handle != h || !reqs[0].Joined || !strings.HasPrefix(reqs[0].File, "cxray/") {
		t.Fatalf("flash requests %+v", reqs)
	}
	pkg, err := mfa2.Parse(reqs[0].Data)
	if err != nil {
		t.Fatalf("the flashed file is not an MFA2 package: %v", err)
	}
	if got, err := pkg.Extract(0); err != nil || !bytes.Equal(got, raw) {
		t.Errorf("the package does not carry the image (err %v)", err)
	}
	if left, _ := filepath.Glob(filepath.Join(k.FirmwareDir, "cxray", "*")); len(left) != 0 {
		t.Errorf("staged files left behind: %v", left)
	}
	out, errs, code = cli(t, "", "fw", "reset", "-d", "kernel:mlx5_0", "--yes", "-o", "json")
	var rr struct {
		Via          string `json:"via"`
		RunningAfter string `json:"running_after"`
	}
	if code != 0 {
		t.Fatalf("reset via devlink: exit %d %s", code, errs)
	}
	mustJSON(t, out, &rr)
	if rr.Via != "devlink" || rr.RunningAfter != "28.41.1000" || len(k.ReloadRequests()) != 1 {
		t.Errorf("reset %+v; reload requests %+v", rr, k.ReloadRequests())
	}
	k.Flash[h] = kerneltest.FlashScript{Errno: linuxabi.EINVAL, ExtAck: "Firmware flash failed: PSID mismatch"}
	k.Reload[h] = kerneltest.ReloadScript{Errno: linuxabi.EOPNOTSUPP, ExtAck: "FW activate is unsupported for this function"}
	img2 := emuImage(t, "--version", "28.42.1000", "--psid", "MT_0000000838")
	for _, o := range []string{"table", "json"} {
		if _, errs, code := cli(t, "", "fw", "update", "-d", "kernel:mlx5_0", img2, "--yes", "-o", o); code != 3 || !strings.Contains(errs, "PSID mismatch") {
			t.Errorf("-o %s refused flash: exit %d %q", o, code, errs)
		}
		if _, errs, code := cli(t, "", "fw", "reset", "-d", "kernel:mlx5_0", "--yes", "-o", o); code != 3 || !strings.Contains(errs, "FW activate is unsupported") {
			t.Errorf("-o %s refused reload: exit %d %q", o, code, errs)
		}
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if _, errs, code := cli(t, "", "fw", "update", "-d", "emu", img2, "--yes", "--via", "devlink"); code != 3 || !strings.Contains(errs, "devlink") {
		t.Errorf("--via devlink on the emulator: exit %d %q", code, errs)
	}
	if _, _, code := cli(t, "", "fw", "update", "-d", "emu", img2, "--yes", "--via", "ioctl"); code != 2 {
		t.Errorf("--via ioctl: exit %d", code)
	}
	if _, _, code := cli(t, "", "fw", "reset", "-d", "kernel:mlx5_0", "--via", "devlink", "--level", "4"); code != 2 {
		t.Errorf("--via devlink --level 4: exit %d", code)
	}
}

// mroqScenario writes the GPU-node example with `prm:` naming the newest
// database of the history, so the emulated firmware answers MROQ.
func mroqScenario(t *testing.T) (string, []string) {
	t.Helper()
	files := prmhistorytest.Files(t)
	newest := files[len(files)-1]
	data, err := os.ReadFile("../examples/gpu-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "gpu-node-mroq.yaml")
	if err := os.WriteFile(file, append([]byte("prm: "+newest+"\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var bdfs []string
	for _, f := range e.Functions() {
		bdfs = append(bdfs, f.BDF)
	}
	return file, bdfs
}

// On an emulator whose firmware answers MROQ (every function of a GPU
// node), fw reset --query lists the levels per type and fw query the
// full-chip ones; a level MROQ does not offer with a type is exit 3 naming
// the ones it does, before anything is sent. With every older tool
// database (no MROQ), the same adapter gives a database finding and MFRL's
// levels, never a failure; table and JSON exit alike.
func TestFwResetMROQ(t *testing.T) {
	file, bdfs := mroqScenario(t)
	if len(bdfs) != 10 {
		t.Fatalf("the GPU node has %d functions; want 10", len(bdfs))
	}
	files := prmhistorytest.Files(t)
	newest := files[len(files)-1]
	type typeRep struct {
		Type   string   `json:"type"`
		Levels []string `json:"levels"`
		Sync   []string `json:"sync"`
	}
	type resetRep struct {
		ByType   []typeRep `json:"by_type"`
		NoMROQ   string    `json:"mroq_unavailable"`
		Category string    `json:"mroq_unavailable_category"`
	}
	wantTypes := []typeRep{
		{Type: "full_chip", Levels: []string{"0 (live_patch)", "3 (pcie_link_toggle)", "4 (perst_reboot)"}, Sync: []string{"legacy", "driver"}},
		{Type: "phy_less", Levels: []string{"3 (pcie_link_toggle)"}, Sync: []string{"legacy", "driver"}},
	}
	for _, bdf := range bdfs {
		dev := "emu:" + file + "@" + bdf
		js, _ := matrixRun(t, newest, "fw", "reset", "-d", dev, "--query")
		var r resetRep
		mustJSON(t, js, &r)
		if diff := cmp.Diff(wantTypes, r.ByType); diff != "" || r.NoMROQ != "" {
			t.Errorf("%s: MROQ per type (-want +got):\n%s%s", bdf, diff, r.NoMROQ)
		}
		js, _ = matrixRun(t, newest, "fw", "query", "-d", dev)
		var q struct {
			Resets struct {
				FullChip []string `json:"full_chip"`
			} `json:"resets"`
		}
		mustJSON(t, js, &q)
		if diff := cmp.Diff(wantTypes[0].Levels, q.Resets.FullChip); diff != "" {
			t.Errorf("%s: fw query resets.full_chip (-want +got):\n%s", bdf, diff)
		}
	}
	dev := "emu:" + file + "@" + bdfs[0]
	for _, o := range []string{"table", "json"} {
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		_, errs, code := cli(t, "", "--adb", newest, "-o", o, "fw", "reset", "-d", dev, "--type", "phy_less", "--level", "4", "--yes")
		if code != 3 || !strings.Contains(errs, "it offers: pcie_link_toggle (3))") {
			t.Errorf("-o %s phy_less at perst_reboot: exit %d %q; want 3 naming pcie_link_toggle alone", o, code, errs)
		}
	}
	// The default level with a phy-less type is the one MROQ offers, and
	// the firmware accepts it in the driver-synced flow.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, errs, code := cli(t, "", "--adb", newest, "-o", "json", "fw", "reset", "-d", dev, "--type", "phy_less", "--sync", "driver", "--yes")
	var sent struct {
		Request struct{ Level, Type, Sync string } `json:"request"`
	}
	if code != 0 {
		t.Fatalf("phy_less driver-synced reset: exit %d %s", code, errs)
	}
	mustJSON(t, out, &sent)
	if sent.Request.Level != "pcie_link_toggle" || sent.Request.Type != "phy_less" || sent.Request.Sync != "driver" {
		t.Errorf("request sent: %+v", sent.Request)
	}
	for _, adb := range append([]string{"builtin"}, files[:len(files)-1]...) {
		js, code := matrixRun(t, adb, "fw", "reset", "-d", dev, "--query")
		var r resetRep
		mustJSON(t, js, &r)
		db, err := source.Open(adb)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Register("MROQ"); err == nil {
			if diff := cmp.Diff(wantTypes, r.ByType); diff != "" {
				t.Errorf("--adb %s: MROQ per type (-want +got):\n%s", adb, diff)
			}
			continue
		}
		if r.ByType != nil || r.Category != "database" || !strings.Contains(r.NoMROQ, "has no MROQ") {
			t.Errorf("--adb %s: %s; want a database finding", adb, js)
		}
		t.Setenv("XDG_STATE_HOME", t.TempDir())
		out, _, tcode := cli(t, "", "--adb", adb, "fw", "reset", "-d", dev, "--query")
		if tcode != code || !strings.Contains(out, "(database finding)") {
			t.Errorf("--adb %s: table exit %d (json %d):\n%s", adb, tcode, code, out)
		}
	}
}
