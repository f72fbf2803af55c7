package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/cxray/cxray/dev/devname"
	"github.com/cxray/cxray/prm"
)

// Identity is what sysfs says about the function and its RDMA device.
type Identity struct {
	Name     string   `json:"name"` // RDMA device, or the BDF when there is none
	RDMA     string   `json:"rdma,omitempty"`
	BDF      string   `json:"bdf"`
	DeviceID uint16   `json:"device_id"`
	Model    string   `json:"model"`
	VF       bool     `json:"vf"`
	NUMANode int      `json:"numa_node"`
	Driver   string   `json:"driver"`
	Netdevs  []string `json:"netdevs"`
	// From /sys/class/infiniband/<dev>/ (empty without an RDMA device).
	FirmwareVersion string `json:"fw_ver,omitempty"`
	// BoardID is the PSID (MT_0000000838).
	BoardID      string `json:"board_id,omitempty"`
	HCAType      string `json:"hca_type,omitempty"` // MT + PCI device ID in decimal (MT4129)
	HWRev        string `json:"hw_rev,omitempty"`
	NodeGUID     string `json:"node_guid,omitempty"`
	SysImageGUID string `json:"sys_image_guid,omitempty"`
	NodeDesc     string `json:"node_desc,omitempty"`
	NodeType     string `json:"node_type,omitempty"` // "1: CA"
	// Problems lists attributes that exist but could not be read or parsed
	// (attribute name: reason). Absent attributes are not problems: older
	// kernels and other drivers lack some.
	Problems map[string]string `json:"problems,omitempty"`
}

// Identity reads the function's PCI identity and, when there is an RDMA
// device, its firmware version, PSID, GUIDs and node description.
func (d *Device) Identity(ctx context.Context) (*Identity, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	if !exists(d.pciDir) {
		return nil, d.goneError()
	}
	f, err := devname.Sys{Root: d.opts.root()}.Function(d.BDF)
	if err != nil {
		return nil, fmt.Errorf("kernel: %v", err)
	}
	id := &Identity{Name: d.name(), RDMA: d.RDMA, BDF: d.BDF, DeviceID: f.DeviceID, Model: f.DeviceName,
		VF: f.VF, NUMANode: f.NUMANode, Driver: f.Driver, Netdevs: f.Netdevs}
	if d.RDMA == "" {
		return id, nil
	}
	dir := d.ibDir()
	if !exists(dir) {
		return nil, d.goneError()
	}
	text := []struct {
		file string
		dst  *string
	}{
		{"fw_ver", &id.FirmwareVersion}, {"board_id", &id.BoardID}, {"hca_type", &id.HCAType},
		{"hw_rev", &id.HWRev}, {"node_desc", &id.NodeDesc}, {"node_type", &id.NodeType},
	}
	for _, t := range text {
		s, ok, err := readOptional(ctx, filepath.Join(dir, t.file))
		if err := ctxErr(ctx, err); err != nil {
			return nil, err
		}
		if err != nil {
			id.problem(t.file, err)
			continue
		}
		if ok {
			*t.dst = s
		}
	}
	for _, g := range []struct {
		file string
		dst  *string
	}{{"node_guid", &id.NodeGUID}, {"sys_image_guid", &id.SysImageGUID}} {
		s, ok, err := readOptional(ctx, filepath.Join(dir, g.file))
		if err := ctxErr(ctx, err); err != nil {
			return nil, err
		}
		if err != nil {
			id.problem(g.file, err)
			continue
		}
		if !ok {
			continue
		}
		v, err := parseGUID(s)
		if err != nil {
			id.problem(g.file, err)
			continue
		}
		*g.dst = prm.FormatGUID(v)
	}
	return id, nil
}

func (id *Identity) problem(file string, err error) {
	if id.Problems == nil {
		id.Problems = map[string]string{}
	}
	id.Problems[file] = err.Error()
}

// Port is one port of the RDMA device.
type Port struct {
	Number      int    `json:"port"`
	State       string `json:"state,omitempty"` // DOWN INIT ARMED ACTIVE ACTIVE_DEFER
	StateID     int    `json:"state_id"`
	PhysState   string `json:"phys_state,omitempty"` // Sleep Polling Disabled ... LinkUp
	PhysStateID int    `json:"phys_state_id"`
	RateText    string `json:"rate_text,omitempty"` // as the kernel prints it
	Rate        *Rate  `json:"rate,omitempty"`
	LinkLayer   string `json:"link_layer,omitempty"` // InfiniBand or Ethernet
	// LID and SMLID are meaningful on InfiniBand ports only.
	LID   *uint32 `json:"lid,omitempty"`
	SMLID *uint32 `json:"sm_lid,omitempty"`
	// Netdev is the interface bound to GID 0 (RoCE ports), "" otherwise.
	Netdev string `json:"netdev,omitempty"`
	// Counters are the IB PortCounters (counters/*). port_xmit_data and
	// port_rcv_data count octets divided by 4; see DataBytes.
	Counters map[string]uint64 `json:"counters"`
	// HWCounters are every file of hw_counters/ but lifespan: mlx5's Q
	// counters (32-bit in the firmware, so they wrap at 2^32), the RoCE
	// retransmission and adaptive-retransmission groups, congestion
	// counters (64-bit), and whatever a newer driver adds.
	HWCounters map[string]uint64 `json:"hw_counters"`
	// HWCountersLifespanMS is how long the kernel caches hw_counters.
	HWCountersLifespanMS *int `json:"hw_counters_lifespan_ms,omitempty"`
	// Problems lists files that exist but could not be read or parsed
	// (path relative to the port directory: reason).
	Problems map[string]string `json:"problems,omitempty"`
}

// DataBytes converts the PMA data counters to bytes: the kernel reports
// port_xmit_data and port_rcv_data in units of 4 octets.
func (p *Port) DataBytes() (tx, rx uint64, ok bool) {
	t, ok1 := p.Counters["port_xmit_data"]
	r, ok2 := p.Counters["port_rcv_data"]
	return t * 4, r * 4, ok1 && ok2
}

// RoCERetransmission lists the hw_counters that show RoCE retransmission
// and its causes (drivers/infiniband/hw/mlx5/counters.c), in a stable order for
// reports; which of them a port has depends on firmware capabilities.
var RoCERetransmission = []string{
	"out_of_sequence", "duplicate_request", "packet_seq_err", "implied_nak_seq_err",
	"local_ack_timeout_err", "rnr_nak_retry_err",
	"roce_adp_retrans", "roce_adp_retrans_to",
	"roce_slow_restart", "roce_slow_restart_cnps", "roce_slow_restart_trans",
	"req_transport_retries_exceeded", "req_rnr_retries_exceeded",
}

func (p *Port) problem(file string, err error) {
	if p.Problems == nil {
		p.Problems = map[string]string{}
	}
	p.Problems[file] = err.Error()
}

// Ports reads every port of the RDMA device, in port order. A function
// without an RDMA device has no ports here (nil, nil).
func (d *Device) Ports(ctx context.Context) ([]Port, error) {
	if d.RDMA == "" {
		return nil, nil
	}
	if !exists(d.ibDir()) {
		return nil, d.goneError()
	}
	names, err := listDirs(filepath.Join(d.ibDir(), "ports"))
	if err != nil {
		return nil, fmt.Errorf("kernel: %s ports: %v", d.RDMA, err)
	}
	var nums []int
	for _, n := range names {
		if v, err := strconv.Atoi(n); err == nil && v > 0 && v < 256 {
			nums = append(nums, v)
		}
	}
	sort.Ints(nums)
	out := make([]Port, 0, len(nums))
	for _, n := range nums {
		p, err := d.Port(ctx, n)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

// Port reads one port. Missing files are left out; unreadable ones are
// listed in Problems. Only a dead context or a vanished device is an error.
func (d *Device) Port(ctx context.Context, n int) (*Port, error) {
	if d.RDMA == "" {
		return nil, fmt.Errorf("kernel: %s has no RDMA device, so no port %d in sysfs (is mlx5_ib loaded?)", d.BDF, n)
	}
	dir := filepath.Join(d.ibDir(), "ports", strconv.Itoa(n))
	if !exists(dir) {
		if !exists(d.ibDir()) {
			return nil, d.goneError()
		}
		return nil, &NotFoundError{fmt.Sprintf("kernel: %s has no port %d", d.RDMA, n)}
	}
	p := &Port{Number: n, Counters: map[string]uint64{}, HWCounters: map[string]uint64{}}
	read := func(file string) (string, bool, error) {
		s, ok, err := readOptional(ctx, filepath.Join(dir, file))
		if cerr := ctxErr(ctx, err); cerr != nil {
			return "", false, cerr
		}
		if err != nil {
			p.problem(file, err)
			return "", false, nil
		}
		return s, ok, nil
	}
	for _, st := range []struct {
		file string
		id   *int
		name *string
	}{{"state", &p.StateID, &p.State}, {"phys_state", &p.PhysStateID, &p.PhysState}} {
		s, ok, err := read(st.file)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		id, name, perr := parseIndexed(s)
		if perr != nil {
			p.problem(st.file, perr)
			continue
		}
		*st.id, *st.name = id, name
	}
	if s, ok, err := read("rate"); err != nil {
		return nil, err
	} else if ok {
		p.RateText = s
		if r, perr := parseRate(s); perr != nil {
			p.problem("rate", perr)
		} else {
			p.Rate = &r
		}
	}
	if s, ok, err := read("link_layer"); err != nil {
		return nil, err
	} else if ok {
		p.LinkLayer = s
	}
	for _, l := range []struct {
		file string
		dst  **uint32
	}{{"lid", &p.LID}, {"sm_lid", &p.SMLID}} {
		s, ok, err := read(l.file)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		v, perr := parseHex(s, 32)
		if perr != nil {
			p.problem(l.file, perr)
			continue
		}
		v32 := uint32(v)
		*l.dst = &v32
	}
	// GID 0's netdev: only RoCE ports have one; on InfiniBand ports the
	// kernel answers the read with an error, which is not a problem.
	if s, err := readAttr(ctx, filepath.Join(dir, "gid_attrs/ndevs/0")); err == nil {
		p.Netdev = s
	} else if cerr := ctxErr(ctx, err); cerr != nil {
		return nil, cerr
	}
	if err := readCounters(ctx, filepath.Join(dir, "counters"), "counters/", p.Counters, p.problem); err != nil {
		return nil, err
	}
	if err := readCounters(ctx, filepath.Join(dir, "hw_counters"), "hw_counters/", p.HWCounters, p.problem); err != nil {
		return nil, err
	}
	if s, ok, err := read("hw_counters/lifespan"); err != nil {
		return nil, err
	} else if ok {
		if v, perr := strconv.Atoi(s); perr != nil {
			p.problem("hw_counters/lifespan", fmt.Errorf("%q is not a number of milliseconds", s))
		} else {
			p.HWCountersLifespanMS = &v
		}
	}
	return p, nil
}

// DeviceHWCounters reads the device-wide hw_counters directory (mlx5 fills
// it from the first port's counter set). Absent directory: empty map.
func (d *Device) DeviceHWCounters(ctx context.Context) (map[string]uint64, map[string]string, error) {
	out := map[string]uint64{}
	problems := map[string]string{}
	if d.RDMA == "" {
		return out, problems, nil
	}
	if !exists(d.ibDir()) {
		return nil, nil, d.goneError()
	}
	err := readCounters(ctx, filepath.Join(d.ibDir(), "hw_counters"), "hw_counters/", out,
		func(f string, err error) { problems[f] = err.Error() })
	if err != nil {
		return nil, nil, err
	}
	return out, problems, nil
}

// readCounters reads every counter file of dir into dst; lifespan is a
// setting, not a counter. Problems go to problem; only a dead context or an
// unlistable directory is an error.
func readCounters(ctx context.Context, dir, prefix string, dst map[string]uint64, problem func(string, error)) error {
	files, err := listFiles(dir)
	if err != nil {
		return fmt.Errorf("kernel: %v", err)
	}
	for _, f := range files {
		if f == "lifespan" {
			continue
		}
		s, err := readAttr(ctx, filepath.Join(dir, f))
		if cerr := ctxErr(ctx, err); cerr != nil {
			return cerr
		}
		if errors.Is(err, os.ErrNotExist) {
			continue // raced with a driver reload; not a problem
		}
		if err != nil {
			problem(prefix+f, err)
			continue
		}
		v, err := parseCounter(s)
		if err != nil {
			problem(prefix+f, err)
			continue
		}
		dst[f] = v
	}
	return nil
}

// ctxErr returns the context's error when err came from it ending; other
// errors (a file that could not be read) give nil, so callers record them as
// problems and go on.
func ctxErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("kernel: %w", err)
	}
	return nil
}

func (d *Device) ibDir() string { return filepath.Join(d.opts.root(), "class/infiniband", d.RDMA) }

func (d *Device) name() string {
	if d.RDMA != "" {
		return d.RDMA
	}
	return d.BDF
}

// GoneError says the device disappeared after Open (driver unbound,
// surprise removal, firmware reset in progress).
type GoneError struct{ Name string }

func (e *GoneError) Error() string {
	return fmt.Sprintf("kernel: %s is gone (the driver was unbound, the adapter removed or is being reset); try again, and check 'cxray status'", e.Name)
}

func (d *Device) goneError() error { return &GoneError{Name: d.name()} }
