package adapter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/kernel"
	"github.com/cxray/cxray/optics"
)

// The kernel side: what mlx5_core and mlx5_ib expose (sysfs, hwmon,
// devlink, rtnetlink, ethtool netlink), read-only and without root but
// for module EEPROM (CAP_NET_ADMIN).

// kernelOS is the OS view of a function of this machine.
type kernelOS struct{ d *kernel.Device }

func (k kernelOS) OS(ctx context.Context) (*OS, error) {
	id, err := k.d.Identity(ctx)
	if err != nil {
		return nil, err
	}
	o := &OS{NUMANode: id.NUMANode, Driver: id.Driver, Netdevs: []Netdev{}, RDMA: []string{}}
	if id.RDMA != "" {
		o.RDMA = append(o.RDMA, id.RDMA)
	}
	nds, err := k.d.Netdevs(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nds {
		o.Netdevs = append(o.Netdevs, Netdev{Name: n.Name, Address: n.Address, PermanentAddress: n.PermanentAddress,
			OperState: n.OperState, Representor: n.Representor()})
	}
	return o, nil
}

func (k kernelOS) RDMACounters(ctx context.Context, port int) (map[string]uint64, error) {
	if k.d.RDMA == "" {
		return nil, &UnsupportedError{What: "RDMA hw_counters", Backend: "kernel", Why: "the function has no RDMA device; is mlx5_ib loaded?"}
	}
	p, err := k.d.Port(ctx, port)
	if err != nil {
		return nil, err
	}
	return p.HWCounters, nil
}

func (a *Adapter) kdev() (*kernel.Device, error) {
	if a.c.Kernel == nil {
		return nil, &UnsupportedError{What: "the kernel's view", Backend: a.c.Backend}
	}
	return a.c.Kernel, nil
}

// kernelIdentity: sysfs identity, devlink for the PSID and the stored
// firmware, the first interface's permanent MAC.
func (a *Adapter) kernelIdentity(ctx context.Context) (*Identity, error) {
	k, err := a.kdev()
	if err != nil {
		return nil, err
	}
	kid, err := k.Identity(ctx)
	if err != nil {
		return nil, err
	}
	id := &Identity{Model: kid.Model, DeviceID: kid.DeviceID, HCAType: kid.HCAType, PSID: kid.BoardID, Firmware: kid.FirmwareVersion,
		NodeGUID: kid.NodeGUID, SysImageGUID: kid.SysImageGUID, HWRev: kid.HWRev, NodeDesc: kid.NodeDesc}
	var errs []error
	if dl, err := k.DevlinkInfo(ctx); err == nil {
		if id.PSID == "" {
			id.PSID = dl.PSID()
		}
		if id.Firmware == "" {
			id.Firmware = dl.FirmwareRunning()
		}
		id.FirmwareStored = dl.FirmwareStored()
		if id.FirmwareStored != "" && id.FirmwareStored != id.Firmware {
			id.FirmwarePending = id.FirmwareStored
		}
	} else if ctx.Err() != nil {
		return nil, err
	} else if id.PSID == "" || id.Firmware == "" {
		errs = append(errs, err)
	} else {
		// Without devlink (old kernels) sysfs still names PSID and
		// firmware when mlx5_ib is loaded; only the stored version is
		// missing then: a note, not a failure.
		errs = append(errs, &PartialError{What: "the stored firmware version", Err: err})
	}
	if nds, err := k.Netdevs(ctx); err == nil {
		for _, n := range nds {
			// An Ethernet MAC: IPoIB interfaces have 20-byte addresses.
			if !n.Representor() && len(n.PermanentAddress) == len("00:00:00:00:00:00") {
				id.PermanentMAC = n.PermanentAddress
				break
			}
		}
	} else if ctx.Err() != nil {
		return nil, err
	}
	return id, errors.Join(errs...)
}

// kernelPorts: the RDMA device's ports, or, without one, one port per
// uplink interface.
func (a *Adapter) kernelPorts(ctx context.Context) ([]Port, error) {
	k, err := a.kdev()
	if err != nil {
		return nil, err
	}
	kps, err := k.Ports(ctx)
	if err != nil {
		return nil, err
	}
	var out []Port
	for _, kp := range kps {
		p := Port{Local: kp.Number, Module: -1, Netdev: kp.Netdev, LinkLayer: kp.LinkLayer}
		if kp.Rate != nil {
			p.Lanes = kp.Rate.Width
		}
		out = append(out, p)
	}
	if len(out) > 0 {
		return out, nil
	}
	nds, err := k.Netdevs(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nds {
		if !n.Representor() {
			out = append(out, Port{Local: len(out) + 1, Module: -1, Netdev: n.Name, LinkLayer: "Ethernet"})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kernel: %s has neither an RDMA device nor a network interface, so the kernel shows no port; load mlx5_ib or bring up mlx5_core's Ethernet side", k.BDF)
	}
	return out, nil
}

// kernelLinks: sysfs port state and rate, or the interface's operstate
// for functions without an RDMA device.
func (a *Adapter) kernelLinks(ctx context.Context, ps []Port) ([]Link, error) {
	k, err := a.kdev()
	if err != nil {
		return nil, err
	}
	var out []Link
	for _, p := range ps {
		l := Link{Port: p.Local}
		kp, err := k.Port(ctx, p.Local)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			// No RDMA device: the interface's operstate is all there is.
			if nd, nerr := k.Netdev(ctx, p.Netdev); nerr == nil && p.Netdev != "" {
				up := nd.OperState == "up"
				l.OperUp, l.OperStatus = &up, nd.OperState
			}
			out = append(out, l)
			continue
		}
		l.State, l.PhysState, l.LinkLayer = kp.State, kp.PhysState, kp.LinkLayer
		if kp.StateID > 0 {
			id := kp.StateID
			l.StateID = &id
		}
		if kp.PhysStateID > 0 {
			id := kp.PhysStateID
			l.PhysStateID = &id
			up := id == 5 // LinkUp
			l.OperUp = &up
			l.OperStatus = kp.PhysState
			// Disabled (3) is the port switched off; anything else means
			// it is administratively up and trying.
			adm := id != 3
			l.AdminUp = &adm
		}
		if kp.Rate != nil {
			g := float64(kp.Rate.Gbps)
			if l.OperUp != nil && !*l.OperUp {
				g = 0
			}
			l.SpeedGbps = &g
		}
		if kp.LinkLayer == LinkInfiniBand {
			// The rate of a port without link is meaningless (mlx5_ib
			// prints an unknown width and speed as 4X SDR).
			if kp.Rate != nil && l.OperUp != nil && *l.OperUp {
				l.IBSpeed, l.Width = kp.Rate.Speed, kp.Rate.Width
				if l.IBSpeed == "" {
					l.IBSpeed = "SDR" // older kernels print SDR with no name
				}
			}
			if kp.StateID >= 2 && kp.StateID <= 4 {
				l.LID, l.SMLID = kp.LID, kp.SMLID
			}
		}
		out = append(out, l)
	}
	return out, nil
}

var sensorLabel = lazyre.New(`^sensor([0-9]+)$`)

// kernelTemperatures: the mlx5 hwmon device.
func (a *Adapter) kernelTemperatures(ctx context.Context) ([]Temperature, error) {
	k, err := a.kdev()
	if err != nil {
		return nil, err
	}
	th, err := k.Temperatures(ctx)
	if err != nil {
		return nil, err
	}
	var out []Temperature
	for _, t := range th.Temps {
		o := Temperature{Sensor: t.Label, Index: -1, Kind: t.Kind, Module: -1, Celsius: t.Celsius, Highest: t.HighestCelsius, High: t.CritCelsius}
		if t.Celsius == nil {
			o.Invalid = "the kernel gives no reading"
		}
		if o.Sensor == "" {
			o.Sensor = "temp" + strconv.Itoa(t.Channel)
		}
		if m := sensorLabel.FindStringSubmatch(t.Label); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil {
				o.Index = i
				if i >= 64 && t.Kind == "module" {
					o.Module = i - 64
				}
			}
		}
		out = append(out, o)
	}
	if len(out) == 0 && th.Note != "" {
		return nil, &UnsupportedError{What: "temperatures", Backend: a.c.Backend, Why: th.Note}
	}
	return out, nil
}

// kernelModule: the module of the port's interface through ethtool
// netlink, decoded by the same code as MCIA. The kernel does not offer the
// firmware's own view.
func (a *Adapter) kernelModule(ctx context.Context, p Port, o ModuleOptions) (*ModuleReading, error) {
	k, err := a.kdev()
	if err != nil {
		return nil, err
	}
	m := &ModuleReading{Port: p.Local, Module: p.Module, Netdev: p.Netdev, Access: "ethtool",
		FirmwareErr: &UnsupportedError{What: "the firmware's module view (PDDR)", Backend: a.c.Backend, Why: "read through registers for it"}}
	if p.Netdev == "" {
		return nil, &UnsupportedError{What: "module EEPROM", Backend: a.c.Backend,
			Why: fmt.Sprintf("port %d has no network interface, and the kernel reads module EEPROM through one (ethtool); bring up mlx5_core's Ethernet or IPoIB side, or read through registers with the PCI address as root", p.Local)}
	}
	r, err := k.ReadModule(ctx, p.Netdev, o.Full)
	var pe *kernel.PermissionError
	switch {
	case err != nil && (ctx.Err() != nil || errors.As(err, &pe)):
		return nil, err
	case err != nil:
		m.EEPROMErr = kernelPathErr(err, p.Netdev)
		return m, nil
	}
	m.Image, m.EEPROM = r.Image, r.Module
	if r.Error != "" {
		m.EEPROMErr = &optics.DecodeError{Kind: r.ErrorKind, Msg: r.Error}
	}
	if r.ErrorKind != optics.KindAllZeros {
		yes := true
		m.Present = &yes
	}
	return m, nil
}

// kernelCounters: the IB PMA port counters of every port.
func (a *Adapter) kernelCounters(ctx context.Context, kind string) ([]CounterSet, error) {
	k, err := a.kdev()
	if err != nil {
		return nil, err
	}
	if k.RDMA == "" {
		return nil, &UnsupportedError{What: "port counters", Backend: a.c.Backend, Why: "the kernel shows them under the RDMA device, and this function has none (is mlx5_ib loaded?)"}
	}
	kps, err := k.Ports(ctx)
	if err != nil {
		return nil, err
	}
	var out []CounterSet
	var problems []string
	for _, p := range kps {
		c := CounterSet{Port: p.Number, Kind: kind, Values: map[string]uint64{}}
		for n, v := range p.Counters {
			c.Values[n] = v
		}
		if len(c.Values) > 0 {
			out = append(out, c)
		}
		for f, why := range p.Problems {
			if strings.HasPrefix(f, "counters/") {
				problems = append(problems, fmt.Sprintf("port %d %s: %s", p.Number, f, why))
			}
		}
	}
	if len(problems) > 0 {
		return out, errors.New(strings.Join(problems, "; "))
	}
	return out, nil
}

// kernelPathErr marks the kernel's answers that concern the way to the
// module, not the module (kernel/netlink.go netlinkErr): no such interface
// now, a driver that does not give the EEPROM. An I/O error from the
// adapter stays a module read failure.
func kernelPathErr(err error, netdev string) error {
	var nf *kernel.NotFoundError
	var ue *kernel.UnsupportedError
	switch {
	case errors.As(err, &nf):
		return &optics.PathError{Err: err, Next: fmt.Sprintf("the kernel has no interface %s now: check it with 'ip link' (renamed, removed, in another network namespace?) and 'cxray status', then read again", netdev)}
	case errors.As(err, &ue):
		return &optics.PathError{Err: err, Next: fmt.Sprintf("this kernel or driver does not give the module EEPROM of %s (ethtool -m %s fails the same way); read it through registers with the PCI address as root (MCIA)", netdev, netdev)}
	}
	return err
}
