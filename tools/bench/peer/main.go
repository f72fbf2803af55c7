// Command peer measures cxray against NVIDIA's mstflint tools on the same
// emulated adapter in one run: config-space accesses and wall time per
// command and per register access, for `mstreg --get` against `cxray reg
// get`, `mstlink -m` against cxray's module read, and `mstflint q` against
// `cxray status`. It prints a table with both columns and their ratio and
// can write it into docs/performance.md.
//
//	go run ./bench/peer                       # print the tables
//	go run ./bench/peer -update docs/performance.md
//
// It needs root and /dev/fuse (like `cxray emu run`) and the mstflint
// package. The program is its own namespace helper: it serves the emulated
// function over /sys/bus/pci/devices in a private mount namespace with a
// trace hook that counts every config-space call the FUSE file system hands
// to the emulator (one per pread/pwrite of the sysfs config file) and what
// the gateway made of it, and a Unix socket through which the driver (this
// program again, inside the namespace) takes a snapshot after each command.
// The commands run one at a time, alternating between the tools, so both
// see the same machine load. Nothing here asserts timings.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/cxray/cxray/emu/nsrun"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/sysfs"
	"github.com/cxray/cxray/emu/sysfs/fusefs"
)

// payload is what the namespace helper gets.
type payload struct {
	Scenario string `json:"scenario"`
	Socket   string `json:"socket"`
}

// build serves the scenario's functions with the counting trace hook and
// answers snapshot requests on the socket.
func build(b []byte) ([]sysfs.DeviceEntry, error) {
	var p payload
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	e, err := scenario.Resolve("emu:"+p.Scenario, scenario.Options{})
	if err != nil {
		return nil, err
	}
	c := newCounter()
	var out []sysfs.DeviceEntry
	for _, f := range e.Functions() {
		f.Device.SetTrace(c.record)
		d := sysfs.DeviceEntry{BDF: f.BDF, Dev: f.Device, NUMANode: -1, Driver: "mlx5_core"}
		if f.Netdev != "" {
			d.Netdevs = []string{f.Netdev}
		}
		if f.RDMA != "" {
			d.RDMA = []string{f.RDMA}
		}
		out = append(out, d)
	}
	ln, err := net.Listen("unix", p.Socket)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				sc := bufio.NewScanner(conn)
				enc := json.NewEncoder(conn)
				for sc.Scan() {
					if enc.Encode(c.snapshot()) != nil {
						return
					}
				}
			}()
		}
	}()
	return out, nil
}

// A pair is one job done by both tools.
type pair struct {
	Name   string
	Mst    []string // the mstflint tool's command
	Cxray  []string
	CxNote string // what cxray's command is, when not the obvious one
	// Same says both commands access the same registers in the same
	// order, so their costs per register access compare like for like.
	Same bool
	// Baseline: the left column is not an mstflint tool but the smallest
	// program (a Go hello world, built like cxray), for start-up alone.
	Baseline bool
}

type plan struct {
	Pairs  []pair
	N      int
	Socket string
	Result string
}

// run is one command run by the driver.
type run struct {
	Tally *Tally
	MS    float64
}

type results struct {
	Mst   map[string][]run
	Cxray map[string][]run
}

func main() {
	nsrun.Child(build, fusefs.Mount)
	if len(os.Args) > 2 && os.Args[1] == "drive" {
		if err := drive(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "peer drive:", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 15, "runs of each command (after one warm-up run)")
	update := flag.String("update", "", "write the tables into this Markdown file, between its BEGIN/END GENERATED markers")
	bdf := flag.String("bdf", "0000:03:00.0", "the emulated function")
	flag.Parse()
	if err := host(*n, *bdf, *update); err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
}

// mstlinkProfile lists the register accesses of `mstlink -d DEV -m` (4.21,
// as traced on the emulator), in order, as a cxray snapshot profile.
const mstlinkProfile = `name: mstlink-m
registers:
  - {register: PDDR, index: {page_select: 0}}
  - {register: PDDR, index: {page_select: 1, page_data.pddr_troubleshooting_page_ext.group_opcode: 1}}
  - {register: SLRG, index: {lane: 0}}
  - {register: PAOS}
  - {register: PDDR, index: {page_select: 3}}
  - {register: PMLP}
  - {register: PDDR, index: {page_select: 0}}
  - {register: PTYS, index: {proto_mask: 4}}
  - {register: PDDR, index: {page_select: 0}}
  - {register: PDDR, index: {page_select: 3}}
  - {register: PDDR, index: {page_select: 1, page_data.pddr_troubleshooting_page_ext.group_opcode: 1}}
  - {register: PMAOS, index: {module: 0}}
  - {register: PDDR, index: {page_select: 3}}
`

const scenarioYAML = `# tools/bench/peer: one ConnectX-7, default profile, manual clock.
clock: {mode: manual}
devices:
  - profile: cx7-2p400g
    bdf: 0000:03:00.0
`

func host(n int, bdf, update string) error {
	if err := nsrun.Check(); err != nil {
		return err
	}
	for _, t := range []string{"mstreg", "mstlink", "mstflint", "go"} {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%s is not installed: %v", t, err)
		}
	}
	dir, err := os.MkdirTemp("", "cxray-peer-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// cxray's kept state (the emulator's, NV journals and backups) stays
	// in the run's directory, never the user's.
	os.Setenv("XDG_STATE_HOME", dir)
	fmt.Fprintln(os.Stderr, "peer: building cxray")
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "cxray"), "github.com/cxray/cxray/cmd/cxray")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as shipped: one static binary
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/cxray: %v\n%s", err, out)
	}
	cx := filepath.Join(dir, "cxray")
	// The floor of any Go program's start-up on this machine: a hello
	// world, static like cxray.
	hello := filepath.Join(dir, "hello")
	if err := os.MkdirAll(hello+".src", 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(hello+".src", "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		return err
	}
	hb := exec.Command("go", "build", "-o", hello, filepath.Join(hello+".src", "main.go"))
	hb.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off")
	if out, err := hb.CombinedOutput(); err != nil {
		return fmt.Errorf("go build hello: %v\n%s", err, out)
	}
	sc := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(sc, []byte(scenarioYAML), 0o644); err != nil {
		return err
	}

	// cxray's module report, or until it exists the register it will read.
	moduleCx, moduleNote := []string{cx, "reg", "get", "PDDR", "-d", bdf, "--index", "page_select=3"}, "PDDR page 3 only: cxray module does not exist yet"
	if out, err := exec.Command(cx, "module", "--help").CombinedOutput(); err == nil && !strings.Contains(string(out), "unknown command") {
		moduleCx, moduleNote = []string{cx, "module", "-d", bdf}, ""
	}
	pl := plan{N: n, Socket: filepath.Join(dir, "count.sock"), Result: filepath.Join(dir, "result.json")}
	reg := func(name string, mstIdx string, cxIdx ...string) pair {
		m := []string{"mstreg", "-d", bdf, "--reg_name", name, "--get"}
		if mstIdx != "" {
			m = append(m, "--indexes", mstIdx)
		}
		c := []string{cx, "reg", "get", name, "-d", bdf}
		for _, i := range cxIdx {
			c = append(c, "--index", i)
		}
		label := name
		if len(cxIdx) > 0 {
			label += " " + strings.Join(cxIdx, " ")
		}
		return pair{Name: label, Mst: m, Cxray: c, Same: true}
	}
	pl.Pairs = []pair{
		reg("MGIR", ""),
		reg("PAOS", "local_port=1,lp_msb=0,swid=0"),
		reg("PTYS", "local_port=1,proto_mask=4,port_type=0,lp_msb=0", "proto_mask=4"),
		reg("PMAOS", "module=0,slot_index=0", "module=0"),
		reg("PDDR", "local_port=1,page_select=0,port_type=0,pnat=0,lp_msb=0,group_opcode=0,tracer_mode=0,pre_trigger_buff_mode=0,"+
			"trigger_cond_fsm=0,trigger_cond_state_or_event=0,trigger_cond_state_event_val=0,pport=0,fsm_mask=0", "page_select=0"),
		{Name: "module info", Mst: []string{"mstlink", "-d", bdf, "-m"}, Cxray: moduleCx, CxNote: moduleNote},
	}
	// mstlink -m's 13 register accesses, in its order, read by cxray in one
	// process (cxray snapshot with a profile of them): per register access
	// like for like.
	if out, err := exec.Command(cx, "snapshot", "--help").CombinedOutput(); err == nil && !strings.Contains(string(out), "unknown command") {
		prof := filepath.Join(dir, "mstlink-m.yaml")
		if err := os.WriteFile(prof, []byte(mstlinkProfile), 0o644); err != nil {
			return err
		}
		pl.Pairs = append(pl.Pairs, pair{Name: "mstlink -m's registers", Mst: []string{"mstlink", "-d", bdf, "-m"},
			Cxray: []string{cx, "snapshot", "-d", bdf, "--profile", prof, "-o", "json"}, CxNote: "the same 13 register reads in one process", Same: true})
	}
	pl.Pairs = append(pl.Pairs, []pair{
		{Name: "adapter query", Mst: []string{"mstflint", "-d", bdf, "q"}, Cxray: []string{cx, "status", "-d", bdf}},
		// The fixed cost of starting each program, without the device.
		{Name: "start-up only", Mst: []string{"mstreg", "-v"}, Cxray: []string{cx, "version"}, CxNote: "no device access"},
		{Name: "start-up vs Go", Mst: []string{hello}, Cxray: []string{cx, "version"}, CxNote: "no device access", Baseline: true},
		{Name: "prm show vs Go", Mst: []string{hello}, Cxray: []string{cx, "prm", "show", "PAOS"}, CxNote: "built-in database, installed descriptions", Baseline: true},
	}...)
	planPath := filepath.Join(dir, "plan.json")
	b, _ := json.Marshal(pl)
	if err := os.WriteFile(planPath, b, 0o644); err != nil {
		return err
	}
	pb, _ := json.Marshal(payload{Scenario: sc, Socket: pl.Socket})
	self, err := os.Executable()
	if err != nil {
		return err
	}
	load0 := loadavg()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	fmt.Fprintf(os.Stderr, "peer: %d runs of %d command pairs, alternating\n", n, len(pl.Pairs))
	start := time.Now()
	code, err := nsrun.Run(ctx, nsrun.Spec{Payload: pb}, []string{self, "drive", planPath}, nil, os.Stderr, os.Stderr)
	if err != nil || code != 0 {
		return fmt.Errorf("the driver failed: exit %d, %v", code, err)
	}
	took := time.Since(start)
	rb, err := os.ReadFile(pl.Result)
	if err != nil {
		return err
	}
	var res results
	if err := json.Unmarshal(rb, &res); err != nil {
		return err
	}
	md := render(pl, res, environment(cx, load0, loadavg(), took))
	fmt.Print(md)
	if update != "" {
		return updateDoc(update, md)
	}
	return nil
}

// drive runs inside the namespace: every pair's two commands in turn, N
// times after a warm-up, with a counter snapshot around each.
func drive(planPath string) error {
	b, err := os.ReadFile(planPath)
	if err != nil {
		return err
	}
	var pl plan
	if err := json.Unmarshal(b, &pl); err != nil {
		return err
	}
	conn, err := net.Dial("unix", pl.Socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	rd := bufio.NewScanner(conn)
	rd.Buffer(make([]byte, 64<<10), 16<<20)
	snap := func() (*Tally, error) {
		if _, err := conn.Write([]byte("snap\n")); err != nil {
			return nil, err
		}
		if !rd.Scan() {
			return nil, fmt.Errorf("counter socket closed: %v", rd.Err())
		}
		var t Tally
		return &t, json.Unmarshal(rd.Bytes(), &t)
	}
	one := func(argv []string) (run, error) {
		if _, err := snap(); err != nil {
			return run{}, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		start := time.Now()
		err := cmd.Run()
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			return run{}, fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, errb.String())
		}
		t, err := snap()
		return run{Tally: t, MS: ms}, err
	}
	res := results{Mst: map[string][]run{}, Cxray: map[string][]run{}}
	for i := 0; i <= pl.N; i++ {
		for _, p := range pl.Pairs {
			// Alternate which tool goes first, so neither always follows
			// the other's page-cache and scheduler footprint.
			order := []bool{true, false} // mstflint's tool first
			if i%2 == 1 {
				order = []bool{false, true}
			}
			for _, mst := range order {
				argv := p.Cxray
				if mst {
					argv = p.Mst
				}
				r, err := one(argv)
				if err != nil {
					return err
				}
				switch {
				case i == 0: // warm-up
				case mst:
					res.Mst[p.Name] = append(res.Mst[p.Name], r)
				default:
					res.Cxray[p.Name] = append(res.Cxray[p.Name], r)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "\rpeer: round %d of %d", i, pl.N)
	}
	fmt.Fprintln(os.Stderr)
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(pl.Result, out, 0o644)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func environment(cx, load0, load1 string, took time.Duration) []string {
	cpu := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := "?"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	first := func(argv ...string) string {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil && len(out) == 0 {
			return "?"
		}
		return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	rev := first("git", "describe", "--always", "--dirty")
	if v := os.Getenv("CXRAY_BENCH_REV"); v != "" {
		rev = v // a copy outside git says which tree it is
	} else if strings.Contains(rev, "fatal") {
		rev = "unknown (not a git checkout)"
	}
	return []string{
		fmt.Sprintf("machine: %s, %d CPUs, Linux %s", cpu, runtime.NumCPU(), kernel),
		"peer: " + first("mstreg", "-v") + " (Debian package " + first("dpkg-query", "-W", "-f", "${Version}", "mstflint") + ")",
		fmt.Sprintf("cxray: %s (git %s), built with %s", first(cx, "version"), rev, runtime.Version()),
		fmt.Sprintf("load average before/after: %s / %s; the run took %v", load0, load1, took.Round(time.Second)),
		time.Now().UTC().Format("measured 2006-01-02 15:04 UTC"),
	}
}

const (
	beginMarker = "<!-- BEGIN GENERATED by `go run ./bench/peer -update docs/performance.md` -->"
	endMarker   = "<!-- END GENERATED -->"
)

// updateDoc replaces the generated part of a Markdown file.
func updateDoc(path, md string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		return errors.New(path + " lacks the generated-section markers")
	}
	s = s[:i+len(beginMarker)] + "\n" + md + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
