// Package ctl is the control socket of a long-running emulator (`cxray emu
// serve`): a client switches faults on and off and advances the emulated
// clock while tools use the devices. The protocol is one JSON request and
// one JSON response per line over a Unix socket.
package ctl

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/emu/nvstore"
	emuoptics "github.com/cxray/cxray/emu/optics"
	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/emu/state"
)

// DefaultSocket is where `cxray emu serve` listens unless told otherwise.
const DefaultSocket = "/run/cxray-emu.sock"

// Request is one command.
type Request struct {
	Op string `json:"op"` // status, fault, clear, advance
	// BDF limits fault and clear to one function; "" means all.
	BDF string `json:"bdf,omitempty"`
	// Set holds fault settings by name (see FaultNames).
	Set map[string]string `json:"set,omitempty"`
	// Duration is how far advance moves a manual clock ("10m").
	Duration string `json:"duration,omitempty"`
	// Module and ModuleFaults (op module): the cage and its faults (names
	// of emu/optics; empty clears them).
	Module       int      `json:"module,omitempty"`
	ModuleFaults []string `json:"module_faults,omitempty"`
	// NV (op nv): NV store faults: no_access, reject_writes (TLV names, *
	// for all), erase_exceeded.
	NV map[string]string `json:"nv,omitempty"`
	// Kind (op plug) is the catalog module to put into cage Module
	// (emu/optics names; "empty" pulls the module out).
	Kind string `json:"kind,omitempty"`
}

// Function describes one emulated function in a status reply.
type Function struct {
	BDF     string            `json:"bdf"`
	Adapter string            `json:"adapter"`
	Profile string            `json:"profile"`
	Netdev  string            `json:"netdev,omitempty"`
	RDMA    string            `json:"rdma,omitempty"`
	Faults  map[string]string `json:"faults"`
	// Semaphores is the function's device state now: who holds the
	// gateway and ICMD semaphores (0: free) and whether an ICMD command is
	// running, so a test or a user can see what a killed process left.
	Semaphores Semaphores `json:"semaphores"`
}

// Semaphores is emu.State as the control socket reports it.
type Semaphores struct {
	Gateway  uint32 `json:"gateway"`
	ICMD     uint32 `json:"icmd"`
	ICMDBusy bool   `json:"icmd_busy"`
}

// Response answers a Request.
type Response struct {
	OK     bool   `json:"ok"`
	Error  string `json:"error,omitempty"`
	PID    int    `json:"pid,omitempty"`
	Clock  string `json:"clock,omitempty"`
	Manual bool   `json:"manual_clock"`
	// State is the log the emulator keeps its state in ("" when it keeps
	// none).
	State     string     `json:"state,omitempty"`
	Functions []Function `json:"functions,omitempty"`
}

// Server serves one emulation.
type Server struct {
	e  *scenario.Emulation
	st *state.State
	ln net.Listener
	mu sync.Mutex
}

// ListenState opens the control socket of an emulation with a kept state:
// what is the device's state (the clock, module plugs) is recorded there,
// so every process on the state sees it; faults stay this emulator's.
func ListenState(path string, st *state.State) (*Server, error) {
	s, err := Listen(path, st.Emulation())
	if err != nil {
		return nil, err
	}
	s.st = st
	return s, nil
}

// Listen opens the control socket. A stale socket file (nobody listening)
// is replaced; a live one is an error.
func Listen(path string, e *scenario.Emulation) (*Server, error) {
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s is in use by another emulator; stop it or give another --socket", path)
	}
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	os.Chmod(path, 0o600)
	return &Server{e: e, ln: ln}, nil
}

// Serve answers clients until the listener is closed.
func (s *Server) Serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.handle(c)
	}
}

// Close stops listening and removes the socket file.
func (s *Server) Close() error {
	path := s.ln.Addr().String()
	err := s.ln.Close()
	os.Remove(path)
	return err
}

func (s *Server) handle(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), 1<<20)
	enc := json.NewEncoder(c)
	for sc.Scan() {
		c.SetDeadline(time.Now().Add(time.Minute))
		var req Request
		var resp Response
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			resp = Response{Error: "bad request: " + err.Error()}
		} else {
			resp = s.Do(req)
		}
		if enc.Encode(resp) != nil {
			return
		}
	}
}

// Do carries out one request (also usable in-process).
func (s *Server) Do(req Request) Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(format string, args ...any) Response {
		return Response{Error: fmt.Sprintf(format, args...)}
	}
	fns, err := s.select_(req.BDF)
	if err != nil {
		return fail("%v", err)
	}
	switch req.Op {
	case "status":
	case "fault":
		if len(req.Set) == 0 {
			return fail("fault needs settings, e.g. gateway_semaphore_held=true; known: %s", strings.Join(FaultNames(), ", "))
		}
		link, set := splitLink(req.Set)
		pc, set := splitPCIe(set)
		for _, f := range fns {
			cur := f.Device.Faults()
			for k, v := range set {
				if err := setFault(&cur, k, v); err != nil {
					return fail("%v", err)
				}
			}
		}
		if len(pc) > 0 {
			if err := applyPCIe(fns, pc); err != nil {
				return fail("%v", err)
			}
		}
		if len(link) > 0 {
			if err := applyLink(fns, link); err != nil {
				return fail("%v", err)
			}
		}
		for _, f := range fns {
			cur := f.Device.Faults()
			for k, v := range set {
				if err := setFault(&cur, k, v); err != nil {
					return fail("%v", err)
				}
			}
			f.Device.SetFaults(cur)
		}
	case "clear":
		if err := applyLink(fns, map[string]string{"reset": "true"}); err != nil {
			return fail("%v", err)
		}
		if err := applyPCIe(fns, map[string]string{"reset": "true"}); err != nil {
			return fail("%v", err)
		}
		for _, f := range fns {
			f.Device.ClearFaults()
			if f.Adapter != nil && f.Adapter.Firmware != nil {
				f.Adapter.Firmware.SetFaults(fw.Faults{})
			}
		}
	case "module":
		mf, err := emuoptics.ParseFaults(req.ModuleFaults)
		if err != nil {
			return fail("%v; module faults: %s", err, strings.Join(emuoptics.FaultNames(), ", "))
		}
		for _, a := range adapters(fns) {
			if a.Optics == nil {
				return fail("adapter %s has no modules", a.Name)
			}
			if err := a.Optics.SetFaults(req.Module, mf); err != nil {
				return fail("%v", err)
			}
		}
	case "nv":
		for _, a := range adapters(fns) {
			st, ok := nvstore.Lookup(a.Firmware)
			if !ok {
				return fail("adapter %s has no NV store", a.Name)
			}
			nf := nvstore.Faults{}
			for k, v := range req.NV {
				switch k {
				case "no_access":
					nf.NoAccess = v == "true"
				case "erase_exceeded":
					nf.EraseExceeded = v == "true"
				case "reject_writes":
					if v != "" {
						nf.RejectWrites = strings.Split(v, ",")
					}
				default:
					return fail("unknown NV fault %q; known: no_access, reject_writes, erase_exceeded", k)
				}
			}
			if err := st.SetFaults(nf); err != nil {
				return fail("%v", err)
			}
		}
	case "plug":
		ads := adapters(fns)
		if len(ads) != 1 {
			return fail("plug: the emulator has %d adapters; pick one with its function's address (--bdf)", len(ads))
		}
		a := ads[0]
		if a.Optics == nil {
			return fail("adapter %s has no modules", a.Name)
		}
		kind := req.Kind
		if kind == "" || kind == "none" {
			kind = emuoptics.Empty
		}
		var err error
		if s.st != nil {
			err = s.st.Plug(a.Name, req.Module, kind)
		} else {
			err = a.Optics.Plug(req.Module, kind)
		}
		if err != nil {
			return fail("%v", err)
		}
	case "advance":
		d, err := time.ParseDuration(req.Duration)
		if err != nil || d <= 0 {
			return fail("advance needs a positive duration such as 30s or 10m")
		}
		if s.e.Manual == nil {
			return fail("the clock runs in real time; start the emulator with a scenario whose clock has mode: manual to advance it")
		}
		if s.st != nil {
			if err := s.st.Advance(d); err != nil {
				return fail("%v", err)
			}
		} else {
			s.e.Manual.Advance(d)
		}
	default:
		return fail("unknown operation %q; use status, fault, clear, module, plug, nv or advance", req.Op)
	}
	return s.status()
}

// adapters are the distinct adapters of some functions.
func adapters(fns []*scenario.Function) []*scenario.Adapter {
	var out []*scenario.Adapter
	seen := map[*scenario.Adapter]bool{}
	for _, f := range fns {
		if f.Adapter != nil && !seen[f.Adapter] {
			seen[f.Adapter] = true
			out = append(out, f.Adapter)
		}
	}
	return out
}

func (s *Server) select_(bdf string) ([]*scenario.Function, error) {
	all := s.e.Functions()
	if bdf == "" {
		return all, nil
	}
	f, err := s.e.Function(bdf)
	if err != nil {
		return nil, err
	}
	return []*scenario.Function{f}, nil
}

func (s *Server) status() Response {
	if s.st != nil {
		_ = s.st.Sync() // the clock as every process sees it
	}
	r := Response{OK: true, PID: os.Getpid(), Clock: s.e.Clock.Now().UTC().Format(time.RFC3339), Manual: s.e.Manual != nil}
	if s.st != nil {
		r.State = s.st.Path()
	}
	for _, f := range s.e.Functions() {
		st := f.Device.State()
		fn := Function{BDF: f.BDF, Netdev: f.Netdev, RDMA: f.RDMA, Faults: faultMap(f.Device.Faults()),
			Semaphores: Semaphores{Gateway: st.GatewaySemaphore, ICMD: st.ICMDSemaphore, ICMDBusy: st.ICMDBusy}}
		if f.Adapter != nil {
			fn.Adapter, fn.Profile = f.Adapter.Name, f.Adapter.Profile
		}
		r.Functions = append(r.Functions, fn)
	}
	return r
}

// FaultNames lists the settings fault accepts.
func FaultNames() []string {
	return append(append([]string{"gateway_semaphore_held", "icmd_semaphore_held", "icmd_stuck_busy", "slow_icmd_polls", "slow_icmd", "removed", "register_status"}, LinkFaultNames()...), PCIeFaultNames()...)
}

// setFault changes one device-level fault. register_status takes
// REGISTER_ID:STATUS (0x9020:4) or "none" to clear the map.
func setFault(f *emu.Faults, name, value string) error {
	b := func() (bool, error) {
		v, err := strconv.ParseBool(value)
		if err != nil {
			return false, fmt.Errorf("%s=%s: give true or false", name, value)
		}
		return v, nil
	}
	var err error
	switch name {
	case "gateway_semaphore_held":
		f.GatewaySemaphoreHeld, err = b()
	case "icmd_semaphore_held":
		f.ICMDSemaphoreHeld, err = b()
	case "icmd_stuck_busy":
		f.ICMDStuckBusy, err = b()
	case "removed":
		f.Removed, err = b()
	case "slow_icmd_polls":
		f.SlowICMDPolls, err = strconv.Atoi(value)
		if err != nil || f.SlowICMDPolls < 0 {
			return fmt.Errorf("slow_icmd_polls=%s: give a number of polls", value)
		}
	case "slow_icmd":
		f.SlowICMD, err = time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("slow_icmd=%s: give a duration such as 50ms", value)
		}
	case "register_status":
		if value == "none" {
			f.RegisterStatus = nil
			return nil
		}
		id, st, ok := strings.Cut(value, ":")
		i, e1 := strconv.ParseUint(id, 0, 16)
		s, e2 := strconv.ParseUint(st, 0, 8)
		if !ok || e1 != nil || e2 != nil {
			return fmt.Errorf("register_status=%s: give REGISTER_ID:STATUS, e.g. 0x9020:4, or none", value)
		}
		m := map[uint16]uint8{}
		for k, v := range f.RegisterStatus {
			m[k] = v
		}
		m[uint16(i)] = uint8(s)
		f.RegisterStatus = m
	default:
		return fmt.Errorf("unknown fault %q; known: %s", name, strings.Join(FaultNames(), ", "))
	}
	return err
}

func faultMap(f emu.Faults) map[string]string {
	m := map[string]string{}
	add := func(k string, on bool) {
		if on {
			m[k] = "true"
		}
	}
	add("gateway_semaphore_held", f.GatewaySemaphoreHeld)
	add("icmd_semaphore_held", f.ICMDSemaphoreHeld)
	add("icmd_stuck_busy", f.ICMDStuckBusy)
	add("removed", f.Removed)
	if f.SlowICMDPolls > 0 {
		m["slow_icmd_polls"] = strconv.Itoa(f.SlowICMDPolls)
	}
	if f.SlowICMD > 0 {
		m["slow_icmd"] = f.SlowICMD.String()
	}
	if len(f.RegisterStatus) > 0 {
		var parts []string
		for id, st := range f.RegisterStatus {
			parts = append(parts, fmt.Sprintf("0x%04x:%d", id, st))
		}
		sort.Strings(parts)
		m["register_status"] = strings.Join(parts, ",")
	}
	return m
}

// Call sends one request to the socket at path.
func Call(ctx context.Context, path string, req Request) (*Response, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such file") || strings.Contains(err.Error(), "connection refused") {
			return nil, fmt.Errorf("no emulator listens on %s; start one with 'cxray emu serve' (or give its --socket)", path)
		}
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), 1<<20)
	if !sc.Scan() {
		if sc.Err() != nil {
			return nil, sc.Err()
		}
		return nil, errors.New("the emulator closed the control connection without answering")
	}
	var resp Response
	if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("bad answer from the emulator: %w", err)
	}
	if !resp.OK {
		return &resp, errors.New(resp.Error)
	}
	return &resp, nil
}
