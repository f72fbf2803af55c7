package kerneltest

import (
	"encoding/binary"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
)

// Reporter is one devlink health reporter the fake answers with.
type Reporter struct {
	Name string
	// Port, when set, makes it a port reporter (tx, rx).
	Port                  *uint32
	State                 uint8 // 0 healthy, 1 error
	Errors, Recoveries    uint64
	GraceMS               uint64
	AutoRecover, AutoDump bool
	DumpNS                uint64 // last dump, ns since the epoch; 0: none
	Diagnose              []Pair // nil: diagnose not supported (EOPNOTSUPP)
}

// Pair is one name and value of a diagnose: Value is a uint8, uint32,
// uint64, bool or string.
type Pair struct {
	Name  string
	Value any
}

// Netlink attribute types of a formatted message (include/net/netlink.h).
const (
	nlaU8        = 1
	nlaU32       = 3
	nlaU64       = 4
	nlaFlag      = 6
	nlaNulString = 10
)

func (k *Kernel) healthGet(greq genetlink.Message, flags netlink.HeaderFlags) ([]genetlink.Message, error) {
	bus, dev, _, err := devlinkTarget(greq.Data)
	if err != nil {
		return nil, err
	}
	if flags&netlink.Dump == 0 {
		return nil, genltest.Error(int(linuxabi.EOPNOTSUPP))
	}
	reps, ok := k.Health[bus+"/"+dev]
	if !ok {
		// A dump of a device without reporters is empty, as in the kernel.
		return nil, nil
	}
	var out []genetlink.Message
	for _, r := range reps {
		ae := netlink.NewAttributeEncoder()
		ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, bus)
		ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, dev)
		if r.Port != nil {
			ae.Uint32(linuxabi.DEVLINK_ATTR_PORT_INDEX, *r.Port)
		}
		r := r
		ae.Nested(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER, func(nae *netlink.AttributeEncoder) error {
			nae.String(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_NAME, r.Name)
			nae.Uint8(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_STATE, r.State)
			nae.Uint64(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_ERR_COUNT, r.Errors)
			nae.Uint64(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_RECOVER_COUNT, r.Recoveries)
			nae.Uint64(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_GRACEFUL_PERIOD, r.GraceMS)
			nae.Uint8(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_AUTO_RECOVER, b2u(r.AutoRecover))
			nae.Uint8(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_AUTO_DUMP, b2u(r.AutoDump))
			if r.DumpNS != 0 {
				nae.Uint64(linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_DUMP_TS_NS, r.DumpNS)
			}
			return nil
		})
		b, err := ae.Encode()
		if err != nil {
			return nil, err
		}
		out = append(out, genetlink.Message{Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_HEALTH_REPORTER_GET, Version: 1}, Data: b})
	}
	return out, nil
}

func (k *Kernel) healthDiagnose(greq genetlink.Message) ([]genetlink.Message, error) {
	bus, dev, name, err := devlinkTarget(greq.Data)
	if err != nil {
		return nil, err
	}
	if k.NoCapNetAdmin {
		return nil, genltest.Error(int(linuxabi.EPERM))
	}
	var rep *Reporter
	for i, r := range k.Health[bus+"/"+dev] {
		if r.Name == name && r.Port == nil {
			rep = &k.Health[bus+"/"+dev][i]
		}
	}
	switch {
	case rep == nil:
		return nil, genltest.Error(int(linuxabi.ENOENT))
	case rep.Diagnose == nil:
		return nil, genltest.Error(int(linuxabi.EOPNOTSUPP))
	}
	items := netlink.NewAttributeEncoder()
	items.ByteOrder = binary.NativeEndian
	items.Flag(linuxabi.DEVLINK_ATTR_FMSG_OBJ_NEST_START, true)
	for _, p := range rep.Diagnose {
		items.Flag(linuxabi.DEVLINK_ATTR_FMSG_PAIR_NEST_START, true)
		items.String(linuxabi.DEVLINK_ATTR_FMSG_OBJ_NAME, p.Name)
		switch v := p.Value.(type) {
		case uint8:
			items.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, nlaU8)
			items.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
		case uint32:
			items.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, nlaU32)
			items.Uint32(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
		case uint64:
			items.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, nlaU64)
			items.Uint64(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
		case bool:
			// As the kernel: a flag only when true.
			items.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, nlaFlag)
			if v {
				items.Flag(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, true)
			}
		case string:
			items.Uint8(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_TYPE, nlaNulString)
			items.String(linuxabi.DEVLINK_ATTR_FMSG_OBJ_VALUE_DATA, v)
		}
		items.Flag(linuxabi.DEVLINK_ATTR_FMSG_NEST_END, true)
	}
	items.Flag(linuxabi.DEVLINK_ATTR_FMSG_NEST_END, true)
	ib, err := items.Encode()
	if err != nil {
		return nil, err
	}
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, bus)
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, dev)
	ae.Bytes(linuxabi.DEVLINK_ATTR_FMSG, ib)
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return []genetlink.Message{{Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE, Version: 1}, Data: b}}, nil
}

func devlinkTarget(b []byte) (bus, dev, reporter string, err error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return "", "", "", err
	}
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.DEVLINK_ATTR_BUS_NAME:
			bus = ad.String()
		case linuxabi.DEVLINK_ATTR_DEV_NAME:
			dev = ad.String()
		case linuxabi.DEVLINK_ATTR_HEALTH_REPORTER_NAME:
			reporter = ad.String()
		}
	}
	return bus, dev, reporter, ad.Err()
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// Stat is one driver statistic (ethtool -S name and value).
type Stat struct {
	Name  string
	Value uint64
}

// Ethtool is a kernel.Options.Ethtool: it answers SIOCETHTOOL's
// GSSET_INFO, GSTRINGS and GSTATS for the interfaces of Stats as the
// kernel does (net/ethtool/ioctl.c: the kernel writes as many strings and
// values as the driver has, whatever the caller's count), and fails a
// request whose buffer is too small for that with EFAULT, where the kernel
// would write past it. Every GSTATS adds Step to the statistics it names.
func (k *Kernel) Ethtool(ifname string, buf []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	stats, ok := k.Stats[ifname]
	if !ok {
		if _, known := k.Links[ifname]; known {
			return linuxabi.EOPNOTSUPP
		}
		return linuxabi.ENODEV
	}
	if len(buf) < 8 {
		return linuxabi.EFAULT
	}
	ne := binary.NativeEndian
	n := len(stats)
	switch ne.Uint32(buf) {
	case linuxabi.ETHTOOL_GSSET_INFO:
		if len(buf) < 16 {
			return linuxabi.EFAULT
		}
		mask := ne.Uint64(buf[8:]) & (1 << 1)
		ne.PutUint64(buf[8:], mask)
		if mask != 0 {
			if len(buf) < 20 {
				return linuxabi.EFAULT
			}
			ne.PutUint32(buf[16:], uint32(n))
		}
	case linuxabi.ETHTOOL_GSTRINGS:
		if len(buf) < 12 || ne.Uint32(buf[4:]) != 1 {
			return linuxabi.EOPNOTSUPP
		}
		if len(buf) < 12+n*32 {
			return linuxabi.EFAULT
		}
		ne.PutUint32(buf[8:], uint32(n))
		for i, s := range stats {
			b := buf[12+i*32 : 12+(i+1)*32]
			clear(b)
			copy(b[:31], s.Name)
		}
		if k.StatsChanged != nil {
			k.StatsChanged(ifname)
		}
	case linuxabi.ETHTOOL_GSTATS:
		if len(buf) < 8+n*8 {
			return linuxabi.EFAULT
		}
		ne.PutUint32(buf[4:], uint32(n))
		for i := range stats {
			stats[i].Value += k.Step[ifname][stats[i].Name]
			ne.PutUint64(buf[8+i*8:], stats[i].Value)
		}
	default:
		return linuxabi.EOPNOTSUPP
	}
	return nil
}
