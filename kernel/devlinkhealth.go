package kernel

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
)

// HealthReporter is one devlink health reporter as `devlink health show`
// prints it (mlx5 registers fw, fw_fatal and vnic on the device, tx and
// rx on the netdev's port): its state, how often it reported an error and
// recovered, its grace period, and the time of its last dump.
type HealthReporter struct {
	Name string `json:"name"`
	// Port is the devlink port index of a port reporter (tx, rx); nil
	// for a device reporter.
	Port  *uint32 `json:"port,omitempty"`
	State string  `json:"state"` // healthy, error
	// Errors and Recoveries count since the driver registered the
	// reporter.
	Errors     uint64 `json:"errors"`
	Recoveries uint64 `json:"recoveries"`
	// GracePeriod is how long after a recovery another error is not
	// recovered automatically (0: no automatic recovery limit).
	GracePeriod time.Duration `json:"grace_period_ns"`
	AutoRecover *bool         `json:"auto_recover,omitempty"`
	AutoDump    *bool         `json:"auto_dump,omitempty"`
	// LastDump is when the reporter last took a dump (zero: never, or a
	// kernel before 5.8 that gives no wall-clock time).
	LastDump time.Time `json:"last_dump,omitempty"`
	// Diagnose is the reporter's diagnose output, flattened to "path:
	// value" pairs in order (nil when not asked for or refused:
	// DiagnoseErr says why).
	Diagnose    []FmsgPair `json:"diagnose,omitempty"`
	DiagnoseErr string     `json:"diagnose_error,omitempty"`
}

// Reporter state values (DEVLINK_HEALTH_REPORTER_STATE_*, uapi
// linux/devlink.h).
const (
	reporterHealthy = 0
	reporterError   = 1
)

// FmsgPair is one name and value of a devlink formatted message.
type FmsgPair struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Value finds a pair by its name path ("Syndrome").
func (r *HealthReporter) Value(name string) (string, bool) {
	for _, p := range r.Diagnose {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// Syndrome is the firmware syndrome the fw reporter's diagnose names (0:
// none), and its description where the kernel gives one
// (drivers/net/ethernet/mellanox/mlx5/core/health.c).
func (r *HealthReporter) Syndrome() (uint64, string, bool) {
	s, ok := r.Value("Syndrome")
	if !ok {
		return 0, "", false
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, "", false
	}
	d, _ := r.Value("Description")
	return v, d, true
}

// HealthReporters lists the function's devlink health reporters (device
// and port ones); with diagnose, each reporter's diagnose is asked for
// too (CAP_NET_ADMIN: a refusal is recorded per reporter, not returned).
func (d *Device) HealthReporters(ctx context.Context, diagnose bool) ([]HealthReporter, error) {
	handle := "pci/" + d.BDF
	c, fam, unbind, err := d.genl(ctx, linuxabi.DEVLINK_GENL_NAME)
	if err != nil {
		return nil, err
	}
	defer func() { unbind(); c.Close() }()
	body, err := devlinkHandle(d.BDF, "")
	if err != nil {
		return nil, err
	}
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_HEALTH_REPORTER_GET, Version: fam.Version},
		Data:   body,
	}, fam.ID, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, netlinkErr(ctx, "devlink health reporters of "+handle, err, "")
	}
	var out []HealthReporter
	for _, m := range msgs {
		bus, dev, r, err := parseHealthReporter(m.Data)
		if err != nil {
			return nil, fmt.Errorf("kernel: devlink health reporters of %s: %v", handle, err)
		}
		// Older kernels dump every instance's reporters: keep ours.
		if bus+"/"+dev != handle || r.Name == "" {
			continue
		}
		out = append(out, r)
		if len(out) > maxEntries {
			return nil, fmt.Errorf("kernel: devlink health reporters of %s: more than %d", handle, maxEntries)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return portKey(out[i]) < portKey(out[j]) })
	if !diagnose {
		return out, nil
	}
	for i := range out {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("kernel: %w", err)
		}
		// Only device reporters: a port reporter's diagnose (tx, rx) is a
		// dump of every queue, not a verdict.
		if out[i].Port != nil {
			continue
		}
		pairs, err := d.diagnose(ctx, c, fam, out[i].Name)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return out, err
			}
			out[i].DiagnoseErr = err.Error()
			continue
		}
		out[i].Diagnose = pairs
	}
	return out, nil
}

func portKey(r HealthReporter) string {
	if r.Port == nil {
		return ""
	}
	return fmt.Sprintf("%010d", *r.Port)
}

// devlinkHandle encodes a devlink instance, and a reporter name when given.
func devlinkHandle(bdf, reporter string) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, "pci")
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, bdf)
	if reporter != "" {
		ae.String(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_NAME, reporter)
	}
	b, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("kernel: encoding the devlink request: %v", err)
	}
	return b, nil
}

func (d *Device) diagnose(ctx context.Context, c *genetlink.Conn, fam genetlink.Family, name string) ([]FmsgPair, error) {
	body, err := devlinkHandle(d.BDF, name)
	if err != nil {
		return nil, err
	}
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, Version: fam.Version},
		Data:   body,
	}, fam.ID, netlink.Request)
	if err != nil {
		return nil, netlinkErr(ctx, "devlink health diagnose of "+name, err, "")
	}
	var pairs []FmsgPair
	for _, m := range msgs {
		ps, err := ParseFmsg(m.Data)
		if err != nil {
			return nil, fmt.Errorf("kernel: devlink health diagnose of %s: %v", name, err)
		}
		pairs = append(pairs, ps...)
	}
	return pairs, nil
}

// parseHealthReporter decodes one DEVLINK_CMD_HEALTH_REPORTER_GET answer.
func parseHealthReporter(b []byte) (bus, dev string, r HealthReporter, err error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return "", "", r, err
	}
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.DEVLINK_ATTR_BUS_NAME:
			bus = ad.String()
		case linuxabi.DEVLINK_ATTR_DEV_NAME:
			dev = ad.String()
		case linuxabi.DEVLINK_ATTR_PORT_INDEX:
			p := ad.Uint32()
			r.Port = &p
		case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					switch nad.Type() {
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_NAME:
						r.Name = nad.String()
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_STATE:
						switch st := nad.Uint8(); st {
						case reporterHealthy:
							r.State = "healthy"
						case reporterError:
							r.State = "error"
						default:
							r.State = fmt.Sprintf("state %d", st)
						}
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT:
						r.Errors = nad.Uint64()
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT:
						r.Recoveries = nad.Uint64()
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD:
						ms := nad.Uint64()
						if ms > math.MaxInt64/uint64(time.Millisecond) {
							ms = math.MaxInt64 / uint64(time.Millisecond)
						}
						r.GracePeriod = time.Duration(ms) * time.Millisecond
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER:
						v := nad.Uint8() != 0
						r.AutoRecover = &v
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP:
						v := nad.Uint8() != 0
						r.AutoDump = &v
					case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS:
						if ns := nad.Uint64(); ns > 0 && ns <= math.MaxInt64 {
							r.LastDump = time.Unix(0, int64(ns)).UTC()
						}
					}
				}
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return "", "", r, err
	}
	if r.State == "" {
		r.State = "unknown"
	}
	return bus, dev, r, nil
}

// Value types of a devlink formatted message: the kernel's netlink
// attribute types (enum in include/net/netlink.h, mirrored as
// DEVLINK_VAR_ATTR_TYPE_* in uapi linux/devlink.h since 6.15).
const (
	fmsgU8        = 1
	fmsgU16       = 2
	fmsgU32       = 3
	fmsgU64       = 4
	fmsgString    = 5
	fmsgFlag      = 6
	fmsgNulString = 10
	fmsgBinary    = 11
)

// maxFmsgDepth bounds the nesting a formatted message may have.
const maxFmsgDepth = 32

// ParseFmsg flattens a devlink formatted message (the DEVLINK_ATTR_FMSG
// of a diagnose or dump answer) into pairs whose names are the path of
// objects and pairs leading to them, joined with ".": the mlx5 fw
// reporter's {"Syndrome": 8, "Description": "..."} gives "Syndrome" and
// "Description". An array's values are one pair each. The message is a
// flat list of start, name, value and end attributes (the kernel's
// devlink_fmsg_prepare_skb); an unbalanced or malformed one is an error.
func ParseFmsg(b []byte) ([]FmsgPair, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var out []FmsgPair
	found := false
	for ad.Next() {
		if ad.Type() != linuxabi.DEVLINK_ATTR_FMSG {
			continue
		}
		found = true
		items := ad.Bytes()
		ps, err := parseFmsgItems(items)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no formatted message in the answer")
	}
	return out, nil
}

func parseFmsgItems(b []byte) ([]FmsgPair, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	ad.ByteOrder = binary.NativeEndian
	var out []FmsgPair
	// stack holds the names of the open nests ("" for an unnamed object).
	var stack []string
	name := ""  // the pending pair's name
	vtype := -1 // the pending value's type
	inPair := func() bool { return len(stack) > 0 }
	path := func() string {
		var parts []string
		for _, s := range stack {
			if s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ".")
	}
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.DEVLINK_ATTR_FMSG_OBJ_NEST_START, linuxabi.DEVLINK_ATTR_FMSG_ARR_NEST_START:
			if len(stack) >= maxFmsgDepth {
				return nil, fmt.Errorf("formatted message nested deeper than %d", maxFmsgDepth)
			}
			// Named by the pair holding it (its nest carries the name).
			stack = append(stack, "")
			name = ""
		case linuxabi.DEVLINK_ATTR_FMSG_PAIR_NEST_START:
			if len(stack) >= maxFmsgDepth {
				return nil, fmt.Errorf("formatted message nested deeper than %d", maxFmsgDepth)
			}
			stack = append(stack, "")
			name = ""
		case linuxabi.DEVLINK_ATTR_FMSG_NEST_END:
			if len(stack) == 0 {
				return nil, fmt.Errorf("formatted message closes a nest it never opened")
			}
			// A false bool is a type without data (the kernel puts a
			// flag attribute only for true).
			if vtype == fmsgFlag {
				out = append(out, FmsgPair{Name: path(), Value: "false"})
			}
			vtype = -1
			stack = stack[:len(stack)-1]
			name = ""
		case linuxabi.DEVLINK_ATTR_FMSG_OBJ_NAME:
			if !inPair() {
				return nil, fmt.Errorf("formatted message names a value outside any object")
			}
			name = ad.String()
			// The pair's nest carries its name, so nests inside it
			// (objects, arrays) are found under it.
			stack[len(stack)-1] = name
		case linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE:
			vtype = int(ad.Uint8())
		case linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA:
			data := ad.Bytes()
			v, err := fmsgValue(vtype, data)
			if err != nil {
				return nil, err
			}
			out = append(out, FmsgPair{Name: path(), Value: v})
			vtype = -1
			if len(out) > 4*maxEntries {
				return nil, fmt.Errorf("formatted message has more than %d values", 4*maxEntries)
			}
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if len(stack) != 0 {
		return nil, fmt.Errorf("formatted message ends with %d nest(s) open", len(stack))
	}
	return out, nil
}

func fmsgValue(t int, b []byte) (string, error) {
	need := map[int]int{fmsgU8: 1, fmsgU16: 2, fmsgU32: 4, fmsgU64: 8}
	if n, ok := need[t]; ok && len(b) != n {
		return "", fmt.Errorf("formatted message value of type %d has %d bytes, want %d", t, len(b), n)
	}
	switch t {
	case fmsgU8:
		return strconv.FormatUint(uint64(b[0]), 10), nil
	case fmsgU16:
		return strconv.FormatUint(uint64(binary.NativeEndian.Uint16(b)), 10), nil
	case fmsgU32:
		return strconv.FormatUint(uint64(binary.NativeEndian.Uint32(b)), 10), nil
	case fmsgU64:
		return strconv.FormatUint(binary.NativeEndian.Uint64(b), 10), nil
	case fmsgFlag:
		return "true", nil
	case fmsgString, fmsgNulString:
		return strings.TrimRight(string(b), "\x00"), nil
	case fmsgBinary:
		return fmt.Sprintf("%x", b), nil
	case -1:
		return "", fmt.Errorf("formatted message value without a type")
	}
	return "", fmt.Errorf("formatted message value of unknown type %d", t)
}
