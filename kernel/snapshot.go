package kernel

import (
	"context"
	"errors"
	"time"
)

// SnapshotOptions choose the parts of a Snapshot that cost more than sysfs
// reads.
type SnapshotOptions struct {
	// Devlink asks devlink for firmware versions (one netlink round trip).
	Devlink bool
	// Links asks rtnetlink for permanent MACs (one round trip per netdev).
	Links bool
	// Modules reads and decodes the module of every netdev but
	// representors (the pages
	// optics.ReadImage asks for: 2 to 8 round trips, each a slow I2C read
	// in the adapter; needs CAP_NET_ADMIN).
	Modules bool
}

// AllParts is every part of a Snapshot.
var AllParts = SnapshotOptions{Devlink: true, Links: true, Modules: true}

// Snapshot is everything the kernel shows about a function at one time.
// Parts that fail are recorded in Errors and left empty, so one failing
// source (no CAP_NET_ADMIN, no devlink) never hides the others.
type Snapshot struct {
	Name             string            `json:"name"`
	BDF              string            `json:"bdf"`
	Time             time.Time         `json:"time"`
	Identity         *Identity         `json:"identity,omitempty"`
	Devlink          *DevlinkInfo      `json:"devlink,omitempty"`
	Ports            []Port            `json:"ports"`
	DeviceHWCounters map[string]uint64 `json:"device_hw_counters,omitempty"`
	Thermal          *Thermal          `json:"thermal,omitempty"`
	Netdevs          []Netdev          `json:"netdevs"`
	Modules          []ModuleReading   `json:"modules,omitempty"`
	// Errors says which part failed and why ("devlink": "...").
	Errors map[string]string `json:"errors,omitempty"`
	// Problems collects the per-file problems of the parts that worked.
	Problems map[string]string `json:"problems,omitempty"`
}

// Snapshot reads every part. It returns an error only when the context
// ends or the device has gone; everything else lands in Snapshot.Errors.
func (d *Device) Snapshot(ctx context.Context, o SnapshotOptions) (*Snapshot, error) {
	s := &Snapshot{Name: d.name(), BDF: d.BDF, Time: time.Now(), Ports: []Port{}, Netdevs: []Netdev{}}
	// fatal decides whether a part's error ends the snapshot.
	fatal := func(part string, err error) bool {
		if err == nil {
			return false
		}
		var gone *GoneError
		if ctx.Err() != nil || errors.As(err, &gone) {
			return true
		}
		if s.Errors == nil {
			s.Errors = map[string]string{}
		}
		s.Errors[part] = err.Error()
		return false
	}
	var err error
	if s.Identity, err = d.Identity(ctx); fatal("identity", err) {
		return nil, err
	}
	if o.Devlink {
		if s.Devlink, err = d.DevlinkInfo(ctx); fatal("devlink", err) {
			return nil, err
		}
	}
	ports, err := d.Ports(ctx)
	if fatal("ports", err) {
		return nil, err
	}
	if ports != nil {
		s.Ports = ports
	}
	hw, probs, err := d.DeviceHWCounters(ctx)
	if fatal("device_hw_counters", err) {
		return nil, err
	}
	if len(hw) > 0 {
		s.DeviceHWCounters = hw
	}
	for f, p := range probs {
		s.problem(f, p)
	}
	if s.Thermal, err = d.Temperatures(ctx); fatal("thermal", err) {
		return nil, err
	}
	nds, err := d.netdevs(ctx, o.Links)
	if fatal("netdevs", err) {
		return nil, err
	}
	if nds != nil {
		s.Netdevs = nds
	}
	if o.Modules {
		for _, n := range s.Netdevs {
			// In switchdev mode a PF has a representor per VF; their
			// module is the uplink's, read once.
			if n.Representor() {
				continue
			}
			m, err := d.Module(ctx, n.Name)
			if fatal("module "+n.Name, err) {
				return nil, err
			}
			if m != nil {
				s.Modules = append(s.Modules, *m)
			}
		}
	}
	return s, nil
}

func (s *Snapshot) problem(what, msg string) {
	if s.Problems == nil {
		s.Problems = map[string]string{}
	}
	s.Problems[what] = msg
}
