package kerneltest

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"syscall"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"

	"github.com/cxray/cxray/internal/linuxabi"
)

// Family IDs the fake kernel hands out (the real ones are dynamic).
const (
	DevlinkFamilyID = 0x20
	EthtoolFamilyID = 0x21
)

// DevlinkInfo is the devlink info one fake instance answers with.
type DevlinkInfo struct {
	Driver, Serial, BoardSerial string
	Fixed, Running, Stored      [][2]string // name, value in order
}

// Link is what fake rtnetlink says about one interface.
type Link struct {
	Index     int
	Address   string // colon hex
	Permanent string // "" leaves IFLA_PERM_ADDRESS out
}

// PageKey names a 128-byte half of module memory.
type PageKey struct {
	I2C, Bank, Page uint8
	Upper           bool
}

// EEPROMRequest is one module EEPROM request the fake received.
type EEPROMRequest struct {
	Netdev                   string
	I2C, Bank, Page          uint8
	Offset, Length           uint32
	HasPage, HasBank, HasI2C bool
}

// Kernel is a fake kernel for the netlink half of the backend: devlink
// info, ethtool module EEPROM and rtnetlink links. Zero values answer
// "no such device".
type Kernel struct {
	// Devlink maps a devlink handle ("pci/0000:c1:00.0") to its info.
	Devlink map[string]DevlinkInfo
	// Links maps an interface name to its addresses.
	Links map[string]Link
	// Modules maps an interface name to its module's memory. A missing
	// half page answers EIO (the MCIA read failed).
	Modules map[string]map[PageKey][]byte
	// RDMA maps an RDMA device name to its raw objects (DialRDMA).
	RDMA map[string]RDMADevice
	// NoCapNetAdmin makes module EEPROM and raw RDMA requests fail with
	// EPERM, as for a process without CAP_NET_ADMIN.
	NoCapNetAdmin bool
	// NoEthtool and NoDevlink make the families unknown (old kernels).
	NoEthtool, NoDevlink bool
	// Health maps a devlink handle to its health reporters (health.go);
	// NoCapNetAdmin refuses their diagnose too.
	Health map[string][]Reporter
	// Stats maps an interface to its driver statistics (ethtool -S), in
	// the driver's order; Step adds to them at every GSTATS request;
	// StatsChanged, when set, runs after every GSTRINGS request with the
	// fake locked (it may change Stats: a driver reconfigured between
	// the two requests).
	Stats        map[string][]Stat
	Step         map[string]map[string]uint64
	StatsChanged func(ifname string)
	// KernelLog is the kernel log's text (dmesg's) that Log returns;
	// LogUnreadable makes Log fail as for a process without CAP_SYSLOG.
	KernelLog     string
	LogUnreadable bool

	// Flash and Reload script devlink dev flash and reload per handle
	// (flash.go); a handle without a script answers EOPNOTSUPP.
	// FirmwareDir is the firmware folder the fake reads flashed files
	// from (kernel.Options.FirmwareDir).
	Flash       map[string]FlashScript
	Reload      map[string]ReloadScript
	FirmwareDir string

	mu       sync.Mutex
	requests []EEPROMRequest
	flashes  []FlashRequest
	reloads  []ReloadRequest
}

// Requests returns the module EEPROM requests received so far.
func (k *Kernel) Requests() []EEPROMRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]EEPROMRequest(nil), k.requests...)
}

// DialGeneric is a kernel.Options.DialGeneric. devlink flash and reload
// go through flashSocket (flash.go), which streams notifications and
// extended acks; everything else through genltest.
func (k *Kernel) DialGeneric() (*genetlink.Conn, error) {
	return genetlink.NewConn(netlink.NewConn(&flashSocket{k: k, inner: genltest.Dial(k.serveGeneric)}, nltest.PID)), nil
}

// DialRoute is a kernel.Options.DialRoute.
func (k *Kernel) DialRoute() (*netlink.Conn, error) {
	return nltest.Dial(k.serveRoute), nil
}

func (k *Kernel) serveGeneric(greq genetlink.Message, nreq netlink.Message) ([]genetlink.Message, error) {
	switch nreq.Header.Type {
	case linuxabi.GENL_ID_CTRL:
		return k.family(greq)
	case DevlinkFamilyID:
		switch greq.Header.Command {
		case linuxabi.DEVLINK_CMD_INFO_GET:
			return k.devlink(greq)
		case linuxabi.DEVLINK_CMD_HEALTH_REPORTER_GET:
			return k.healthGet(greq, nreq.Header.Flags)
		case linuxabi.DEVLINK_CMD_HEALTH_REPORTER_DIAGNOSE:
			return k.healthDiagnose(greq)
		}
		return nil, genltest.Error(int(linuxabi.EOPNOTSUPP))
	case EthtoolFamilyID:
		if greq.Header.Command != linuxabi.ETHTOOL_MSG_MODULE_EEPROM_GET {
			return nil, genltest.Error(int(linuxabi.EOPNOTSUPP))
		}
		return k.eeprom(greq)
	}
	return nil, genltest.Error(int(linuxabi.ENOENT))
}

func (k *Kernel) family(greq genetlink.Message) ([]genetlink.Message, error) {
	ad, err := netlink.NewAttributeDecoder(greq.Data)
	if err != nil {
		return nil, err
	}
	name := ""
	for ad.Next() {
		if ad.Type() == linuxabi.CTRL_ATTR_FAMILY_NAME {
			name = ad.String()
		}
	}
	var id uint16
	switch {
	case name == linuxabi.DEVLINK_GENL_NAME && !k.NoDevlink:
		id = DevlinkFamilyID
	case name == linuxabi.ETHTOOL_GENL_NAME && !k.NoEthtool:
		id = EthtoolFamilyID
	default:
		return nil, genltest.Error(int(linuxabi.ENOENT))
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint16(linuxabi.CTRL_ATTR_FAMILY_ID, id)
	ae.String(linuxabi.CTRL_ATTR_FAMILY_NAME, name)
	ae.Uint32(linuxabi.CTRL_ATTR_VERSION, 1)
	if id == DevlinkFamilyID {
		// devlink's one multicast group, where flash progress goes.
		ae.Nested(linuxabi.CTRL_ATTR_MCAST_GROUPS, func(nae *netlink.AttributeEncoder) error {
			nae.Nested(1, func(g *netlink.AttributeEncoder) error {
				g.String(linuxabi.CTRL_ATTR_MCAST_GRP_NAME, linuxabi.DEVLINK_GENL_MCGRP_CONFIG_NAME)
				g.Uint32(linuxabi.CTRL_ATTR_MCAST_GRP_ID, DevlinkConfigGroup)
				return nil
			})
			return nil
		})
	}
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return []genetlink.Message{{Header: genetlink.Header{Command: linuxabi.CTRL_CMD_NEWFAMILY, Version: 2}, Data: b}}, nil
}

func (k *Kernel) devlink(greq genetlink.Message) ([]genetlink.Message, error) {
	ad, err := netlink.NewAttributeDecoder(greq.Data)
	if err != nil {
		return nil, err
	}
	var bus, dev string
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.DEVLINK_ATTR_BUS_NAME:
			bus = ad.String()
		case linuxabi.DEVLINK_ATTR_DEV_NAME:
			dev = ad.String()
		}
	}
	info, ok := k.Devlink[bus+"/"+dev]
	if !ok {
		return nil, genltest.Error(int(linuxabi.ENODEV))
	}
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, bus)
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, dev)
	ae.String(linuxabi.DEVLINK_ATTR_INFO_DRIVER_NAME, info.Driver)
	if info.Serial != "" {
		ae.String(linuxabi.DEVLINK_ATTR_INFO_SERIAL_NUMBER, info.Serial)
	}
	if info.BoardSerial != "" {
		ae.String(linuxabi.DEVLINK_ATTR_INFO_BOARD_SERIAL_NUMBER, info.BoardSerial)
	}
	for _, g := range []struct {
		typ  uint16
		list [][2]string
	}{{linuxabi.DEVLINK_ATTR_INFO_VERSION_FIXED, info.Fixed}, {linuxabi.DEVLINK_ATTR_INFO_VERSION_RUNNING, info.Running}, {linuxabi.DEVLINK_ATTR_INFO_VERSION_STORED, info.Stored}} {
		for _, nv := range g.list {
			ae.Nested(g.typ, func(nae *netlink.AttributeEncoder) error {
				nae.String(linuxabi.DEVLINK_ATTR_INFO_VERSION_NAME, nv[0])
				nae.String(linuxabi.DEVLINK_ATTR_INFO_VERSION_VALUE, nv[1])
				return nil
			})
		}
	}
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return []genetlink.Message{{Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_INFO_GET, Version: 1}, Data: b}}, nil
}

func (k *Kernel) eeprom(greq genetlink.Message) ([]genetlink.Message, error) {
	ad, err := netlink.NewAttributeDecoder(greq.Data)
	if err != nil {
		return nil, err
	}
	var r EEPROMRequest
	for ad.Next() {
		switch ad.Type() {
		case 1:
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				for nad.Next() {
					if nad.Type() == linuxabi.ETHTOOL_A_HEADER_DEV_NAME {
						r.Netdev = nad.String()
					}
				}
				return nil
			})
		case 2:
			r.Offset = ad.Uint32()
		case 3:
			r.Length = ad.Uint32()
		case 4:
			r.Page, r.HasPage = ad.Uint8(), true
		case 5:
			r.Bank, r.HasBank = ad.Uint8(), true
		case 6:
			r.I2C, r.HasI2C = ad.Uint8(), true
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.requests = append(k.requests, r)
	k.mu.Unlock()
	if k.NoCapNetAdmin {
		return nil, genltest.Error(int(linuxabi.EPERM))
	}
	// The kernel's own checks (net/ethtool/eeprom.c), so that a request
	// the real kernel refuses is refused here too.
	if r.Length == 0 || r.Length > 128 || r.Offset > 255 || r.Offset+r.Length > 256 ||
		(r.Offset < 128 && r.Offset+r.Length > 128) || (r.Offset < 128 && r.Page != 0) || !r.HasI2C || r.I2C > 0x7f {
		return nil, genltest.Error(int(linuxabi.EINVAL))
	}
	mod, ok := k.Modules[r.Netdev]
	if !ok {
		if _, known := k.Links[r.Netdev]; known {
			return nil, genltest.Error(int(linuxabi.EOPNOTSUPP))
		}
		return nil, genltest.Error(int(linuxabi.ENODEV))
	}
	key := PageKey{I2C: r.I2C, Bank: r.Bank, Page: r.Page, Upper: r.Offset >= 128}
	half, ok := mod[key]
	if !ok || len(half) != 128 {
		return nil, genltest.Error(int(linuxabi.EIO))
	}
	start := int(r.Offset) % 128
	data := half[start : start+int(r.Length)]
	ae := netlink.NewAttributeEncoder()
	ae.Nested(1, func(nae *netlink.AttributeEncoder) error {
		nae.String(linuxabi.ETHTOOL_A_HEADER_DEV_NAME, r.Netdev)
		return nil
	})
	ae.Bytes(7, data)
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return []genetlink.Message{{Header: genetlink.Header{Command: linuxabi.ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY, Version: 1}, Data: b}}, nil
}

func (k *Kernel) serveRoute(reqs []netlink.Message) ([]netlink.Message, error) {
	if len(reqs) != 1 {
		return nil, fmt.Errorf("kerneltest: %d rtnetlink requests at once", len(reqs))
	}
	req := reqs[0]
	if req.Header.Type != linuxabi.RTM_GETLINK || len(req.Data) < linuxabi.SizeofIfInfomsg {
		return nltest.Error(int(linuxabi.EOPNOTSUPP), reqs)
	}
	ad, err := netlink.NewAttributeDecoder(req.Data[linuxabi.SizeofIfInfomsg:])
	if err != nil {
		return nil, err
	}
	name := ""
	for ad.Next() {
		if ad.Type() == linuxabi.IFLA_IFNAME {
			name = ad.String()
		}
	}
	l, ok := k.Links[name]
	if !ok {
		return nltest.Error(int(linuxabi.ENODEV), reqs)
	}
	hdr := make([]byte, linuxabi.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(hdr[4:8], uint32(l.Index))
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.IFLA_IFNAME, name)
	if l.Address != "" {
		mac, err := net.ParseMAC(l.Address)
		if err != nil {
			return nil, err
		}
		ae.Bytes(linuxabi.IFLA_ADDRESS, mac)
	}
	if l.Permanent != "" {
		mac, err := net.ParseMAC(l.Permanent)
		if err != nil {
			return nil, err
		}
		ae.Bytes(linuxabi.IFLA_PERM_ADDRESS, mac)
	}
	b, err := ae.Encode()
	if err != nil {
		return nil, err
	}
	return []netlink.Message{{
		Header: netlink.Header{Type: linuxabi.RTM_NEWLINK, Sequence: req.Header.Sequence, PID: req.Header.PID},
		Data:   append(hdr, b...),
	}}, nil
}

// Log is kernel.Options.Log over KernelLog.
func (k *Kernel) Log(ctx context.Context) ([]byte, error) {
	if k.LogUnreadable {
		return nil, syscall.EPERM
	}
	return []byte(k.KernelLog), nil
}

// CX7Log is the fixture's kernel log: a clean probe of both functions.
const CX7Log = `[    4.101200] mlx5_core 0000:c1:00.0: firmware version: 28.39.1002
[    4.101900] mlx5_core 0000:c1:00.0: 504.112 Gb/s available PCIe bandwidth (32.0 GT/s PCIe x16 link)
[    4.702100] mlx5_core 0000:c1:00.1: firmware version: 28.39.1002
[    6.004000] mlx5_core 0000:c1:00.0 ens1f0np0: Link up
`

// CX7Kernel is the netlink side of the CX7 tree: devlink info for both
// functions (a newer image in flash than running), the permanent MACs, and
// a CMIS 400G module on ens1f0np0 (see CMISModule), and a
// clean kernel log (CX7Log).
func CX7Kernel() *Kernel {
	info := func(serial string) DevlinkInfo {
		return DevlinkInfo{
			Driver: "mlx5_core", Serial: serial, BoardSerial: "MT2314X12345",
			Fixed:   [][2]string{{"fw.psid", "MT_0000000838"}},
			Running: [][2]string{{"fw.version", "28.39.1002"}, {"fw", "28.39.1002"}},
			Stored:  [][2]string{{"fw.version", "28.41.1000"}, {"fw", "28.41.1000"}},
		}
	}
	return &Kernel{
		KernelLog: CX7Log,
		Devlink: map[string]DevlinkInfo{
			"pci/0000:c1:00.0": info("a0-88-c2-ff-ff-45-67-e2"),
			"pci/0000:c1:00.1": info("a0-88-c2-ff-ff-45-67-e2"),
		},
		Links: map[string]Link{
			"ens1f0np0":  {Index: 6, Address: "02:11:22:33:44:55", Permanent: "a0:88:c2:45:67:e2"},
			"ibp193s0f1": {Index: 7, Address: "00:00:10:49:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:45:67:e3", Permanent: "00:00:10:49:fe:80:00:00:00:00:00:00:a0:88:c2:03:00:45:67:e3"},
			"lo":         {Index: 1, Address: "00:00:00:00:00:00"},
		},
		Modules: map[string]map[PageKey][]byte{"ens1f0np0": CMISModule()},
		Health: map[string][]Reporter{
			"pci/0000:c1:00.0": CX7Reporters(),
			"pci/0000:c1:00.1": CX7Reporters(),
		},
		Stats: map[string][]Stat{"ens1f0np0": CX7Stats(), "ibp193s0f1": {{"rx_packets", 1000}, {"tx_packets", 1000}}},
	}
}

// CX7Reporters are mlx5's devlink health reporters of a healthy function
// (drivers/net/ethernet/mellanox/mlx5/core/health.c, en/reporter_*.c):
// fw and fw_fatal with their grace periods, vnic, and the port's tx and
// rx, tx having recovered twice from error CQEs.
func CX7Reporters() []Reporter {
	port := uint32(65535)
	return []Reporter{
		{Name: "fw", Diagnose: []Pair{{"Syndrome", uint8(0)}}},
		{Name: "fw_fatal", GraceMS: 60000, AutoRecover: true, AutoDump: true},
		{Name: "vnic", Diagnose: []Pair{{"total_error_queues", uint32(0)}, {"cq_overrun", uint32(0)}}},
		{Name: "tx", Port: &port, Errors: 2, Recoveries: 2, GraceMS: 500, AutoRecover: true, AutoDump: true, DumpNS: 1700000000000000000},
		{Name: "rx", Port: &port, GraceMS: 500, AutoRecover: true, AutoDump: true},
	}
}

// CX7Stats are driver statistics of an mlx5 Ethernet interface, the names
// of en_stats.c, a few of each group the health and half-bandwidth
// checks read.
func CX7Stats() []Stat {
	return []Stat{
		{"rx_packets", 81234567}, {"tx_packets", 79876543}, {"rx_bytes", 83184196608}, {"tx_bytes", 81793580032},
		{"rx_out_of_buffer", 0}, {"rx_discards_phy", 12}, {"tx_discards_phy", 0}, {"rx_crc_errors_phy", 0},
		{"rx_pause_ctrl_phy", 0}, {"tx_pause_ctrl_phy", 0},
		{"rx_pci_signal_integrity", 0}, {"tx_pci_signal_integrity", 0}, {"outbound_pci_buffer_overflow", 0},
		{"outbound_pci_stalled_rd", 0}, {"outbound_pci_stalled_wr", 0},
		{"outbound_pci_stalled_rd_events", 0}, {"outbound_pci_stalled_wr_events", 0},
		{"rx_prio0_pause", 0}, {"tx_prio0_pause", 0}, {"rx_prio3_pause", 1200}, {"tx_prio3_pause", 800},
		{"rx_prio3_buf_discard", 0}, {"rx_prio3_cong_discard", 0}, {"rx_prio3_marked", 0},
		{"rx0_packets", 40617283}, {"tx0_packets", 39938271}, {"tx0_recover", 2}, {"tx0_cqe_err", 2},
	}
}

// CMISModule is the memory of a paged CMIS module (OSFP, identifier 0x19)
// that advertises banks 0-1: lower page, upper pages 00h, 01h, 02h, and 11h
// for banks 0 and 1. Each half page is filled with a pattern naming it
// (i2c, bank, page, half) so a test can tell the halves apart; the bytes a
// page-selection logic reads are set to real values.
func CMISModule() map[PageKey][]byte {
	m := map[PageKey][]byte{}
	fill := func(k PageKey) []byte {
		b := make([]byte, 128)
		for i := range b {
			b[i] = byte(int(k.Page)*7 + int(k.Bank)*3 + i)
		}
		m[k] = b
		return b
	}
	lower := fill(PageKey{I2C: 0x50})
	lower[0] = 0x19 // OSFP
	lower[1] = 0x50 // CMIS 5.0
	lower[2] = 0x00 // paged memory
	up0 := fill(PageKey{I2C: 0x50, Upper: true})
	up0[0] = 0x19
	copy(up0[129-128:], "NVIDIA          ")
	p1 := fill(PageKey{I2C: 0x50, Page: 1, Upper: true})
	p1[142-128] = 0x01 // banks 0 and 1
	fill(PageKey{I2C: 0x50, Page: 2, Upper: true})
	fill(PageKey{I2C: 0x50, Page: 0x11, Upper: true})
	fill(PageKey{I2C: 0x50, Bank: 1, Page: 0x11, Upper: true})
	return m
}
