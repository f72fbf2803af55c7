package adapter

import (
	"time"

	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

// Identity is what identifies a function and its firmware. Empty fields
// are unknown on this backend.
type Identity struct {
	Model    string `json:"model,omitempty"`     // ConnectX-7
	DeviceID uint16 `json:"device_id,omitempty"` // PCI device ID, 0x1021
	// HCAType is MT + the PCI device ID in decimal (MT4129), as mlx5_ib
	// names it.
	HCAType string `json:"hca_type,omitempty"`
	PSID    string `json:"psid,omitempty"`
	// Firmware is the running firmware version; FirmwareStored the
	// version in flash, which runs after the next firmware reset ("" when
	// the backend cannot tell); FirmwarePending is FirmwareStored when it
	// differs from the running one.
	Firmware        string `json:"firmware,omitempty"`
	FirmwareStored  string `json:"firmware_stored,omitempty"`
	FirmwarePending string `json:"firmware_pending,omitempty"`
	// FirmwareBuilt is the firmware's build date (MGIR), zero when unknown.
	FirmwareBuilt time.Time `json:"firmware_built,omitempty"`
	// Ports is how many ports the adapter has (MGIR num_ports), not how
	// many this function owns: see Adapter.Ports.
	Ports int `json:"ports,omitempty"`
	// BaseMAC is the adapter's manufacturing base MAC; PermanentMAC this
	// function's burnt-in MAC.
	BaseMAC      string `json:"base_mac,omitempty"`
	PermanentMAC string `json:"permanent_mac,omitempty"`
	NodeGUID     string `json:"node_guid,omitempty"`
	SysImageGUID string `json:"sys_image_guid,omitempty"`
	PartNumber   string `json:"part_number,omitempty"` // adapter part number (MQIS)
	HWRev        string `json:"hw_rev,omitempty"`
	NodeDesc     string `json:"node_desc,omitempty"`
}

// OS is the operating system's view of a function: its interfaces, RDMA
// device and NUMA node. On the emulator it is the scenario's.
type OS struct {
	Netdevs  []Netdev `json:"netdevs"`
	RDMA     []string `json:"rdma"`
	NUMANode int      `json:"numa_node"` // -1 unknown
	Driver   string   `json:"driver,omitempty"`
}

// Netdev is a network interface of the function and its addresses.
type Netdev struct {
	Name             string `json:"name"`
	Address          string `json:"address,omitempty"`           // current MAC
	PermanentAddress string `json:"permanent_address,omitempty"` // burnt-in MAC, when the OS knows it
	OperState        string `json:"operstate,omitempty"`
	// Representor: an e-switch representor, which shares the uplink's
	// port and module.
	Representor bool `json:"representor,omitempty"`
}

// Port is one port this function owns: the topology every feature uses.
// Local is the port number the function's registers take (local_port);
// Module the cage of its module (-1 unknown).
type Port struct {
	Local     int    `json:"port"`
	Module    int    `json:"module"`
	Lanes     int    `json:"lanes,omitempty"`
	Netdev    string `json:"netdev,omitempty"`
	LinkLayer string `json:"link_layer,omitempty"` // Ethernet, InfiniBand
}

// Link is the state of one port's link.
type Link struct {
	Port int `json:"port"`
	// AdminUp: administratively up; OperUp: the link is up. nil unknown.
	AdminUp *bool `json:"admin_up,omitempty"`
	OperUp  *bool `json:"oper_up,omitempty"`
	// AdminStatus and OperStatus are the backend's own words (PAOS enum
	// names, or the kernel's port state).
	AdminStatus string `json:"admin_status,omitempty"`
	OperStatus  string `json:"oper_status,omitempty"`
	// SpeedGbps is the operating speed (nil unknown, 0 while down);
	// MaxSpeedGbps what the port can do (nil unknown).
	SpeedGbps    *float64 `json:"speed_gbps,omitempty"`
	MaxSpeedGbps *float64 `json:"max_speed_gbps,omitempty"`
	// StateID and PhysStateID are the InfiniBand port states the kernel
	// shows (4 ACTIVE; 5 LinkUp); State and PhysState their names.
	StateID     *int   `json:"state_id,omitempty"`
	PhysStateID *int   `json:"phys_state_id,omitempty"`
	State       string `json:"state,omitempty"`
	PhysState   string `json:"phys_state,omitempty"`
	// LinkLayer is LinkEthernet or LinkInfiniBand ("" unknown).
	LinkLayer string `json:"link_layer,omitempty"`
	// IBSpeed is an InfiniBand link's speed (NDR), Width the lanes it
	// trained to (4, or fewer on a degraded link); "" and 0 while down or
	// unknown.
	IBSpeed string `json:"ib_speed,omitempty"`
	Width   int    `json:"width,omitempty"`
	// LID and SMLID are an InfiniBand port's LID and its subnet manager's
	// (nil unknown, or before the subnet manager assigned them).
	LID   *uint32 `json:"lid,omitempty"`
	SMLID *uint32 `json:"sm_lid,omitempty"`
}

// LinkRegisters are one port's PAOS and PTYS readings (PTYS for the
// port's link layer: proto_mask 4 on Ethernet, 1 on InfiniBand). A nil
// reading was not made or failed; its error, when it failed, is beside
// it (also a "not supported" that Links itself leaves unsaid).
type LinkRegisters struct {
	PAOS, PTYS       *prm.Decoded
	PAOSErr, PTYSErr error
}

// Temperature is one sensor's reading.
type Temperature struct {
	// Sensor names the sensor: the firmware's name, else "sensor<index>".
	Sensor string `json:"sensor"`
	// Index is the MTMP sensor index (-1 when the backend has none).
	Index int `json:"index"`
	// Kind is "asic" or "module".
	Kind string `json:"kind"`
	// Module is the cage of a module sensor, -1 for ASIC sensors.
	Module int `json:"module"`
	// Celsius is the reading; nil when the sensor answered a pattern that
	// means "no reading" (Invalid says which).
	Celsius *float64 `json:"celsius"`
	Invalid string   `json:"invalid,omitempty"`
	// Highest is the highest reading recorded; High and Low the
	// firmware's warning thresholds. nil: not given.
	Highest *float64 `json:"highest,omitempty"`
	High    *float64 `json:"high,omitempty"`
	Low     *float64 `json:"low,omitempty"`
}

// CounterSet is one port's counters of one kind.
type CounterSet struct {
	Port int `json:"port"`
	// Kind is "ppcnt" (PPCNT groups), "ib" (IB PMA port counters) or
	// "rdma" (RDMA hw_counters).
	Kind   string            `json:"kind"`
	Values map[string]uint64 `json:"values"`
}

// ModuleReading is what was read about one port's module.
type ModuleReading struct {
	Port   int    `json:"port"`
	Module int    `json:"module"` // cage, -1 unknown
	Netdev string `json:"netdev,omitempty"`
	// Access says how the EEPROM was read: "MCIA" (registers) or
	// "ethtool" (the kernel).
	Access string `json:"eeprom_access"`
	// Present says whether a module is plugged (nil unknown).
	Present *bool `json:"present,omitempty"`
	// OperStatus and ErrorType are the firmware's module state and error
	// (PMAOS enum names), "" when not read.
	OperStatus string `json:"oper_status,omitempty"`
	ErrorType  string `json:"error_type,omitempty"`
	// Image is the raw memory read; EEPROM its decode. EEPROMErr says why
	// there is no usable decode (a *optics.DecodeError when the bytes did
	// not make sense).
	Image     *optics.Image  `json:"-"`
	EEPROM    *optics.Module `json:"-"`
	EEPROMErr error          `json:"-"`
	// NoMCIA: the firmware refuses EEPROM access; only its own view is
	// available.
	NoMCIA bool `json:"-"`
	// Firmware is the firmware's decoded view (PDDR page 3), nil when the
	// backend does not offer it (FirmwareErr says why).
	Firmware    *optics.Module `json:"-"`
	FirmwareErr error          `json:"-"`
}

// Best is the decode to show or export: the EEPROM when it read and
// decoded, else the firmware's view when it identifies a module.
func (m *ModuleReading) Best() *optics.Module {
	if m.EEPROM != nil && m.EEPROMErr == nil {
		return m.EEPROM
	}
	if m.Firmware != nil && m.Firmware.CableType != optics.CableUnplugged && m.Firmware.CableType != optics.CableUnidentified {
		return m.Firmware
	}
	return nil
}

// Observation is the reading as optics.Diagnose takes it.
func (m *ModuleReading) Observation() optics.Observation {
	return optics.Observation{Module: m.Module, Port: m.Port, OperStatus: m.OperStatus, ErrorType: m.ErrorType,
		EEPROM: m.EEPROM, EEPROMErr: m.EEPROMErr, Firmware: m.Firmware, FirmwareErr: m.FirmwareErr,
		FirmwareUnsupportsEE: m.NoMCIA}
}

// ModuleOptions tune Module.
type ModuleOptions struct {
	// Firmware also reads the firmware's view (PDDR page 3) when the
	// EEPROM decodes; it is always read when the EEPROM does not.
	Firmware bool
	// Full reads every byte of each half page the module's standard
	// defines (module --raw); otherwise only the bytes decoding needs are
	// read, and static pages are reused from an earlier read of the same
	// module through this adapter (optics.ReadImageCached).
	Full bool
}
