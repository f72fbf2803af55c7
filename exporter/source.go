package exporter

import (
	"context"
	"errors"

	"github.com/cxray/cxray/optics"
)

// Source is one device the exporter reads. Every method takes the scrape's
// context and must return once it ends. A method a backend cannot serve
// returns an error matching ErrUnsupported; its collector is then left out
// for that device rather than reported as failing.
//
// The exporter calls at most one method of a Source at a time.
type Source interface {
	// Name is the value of the device label: the PCI address.
	Name() string
	// Backend is how the device is read: "direct", "emulator" or "kernel".
	Backend() string
	Info(ctx context.Context) (*Info, error)
	Temperatures(ctx context.Context) ([]Temperature, error)
	Ports(ctx context.Context) ([]Port, error)
	Modules(ctx context.Context) ([]Module, error)
	// PortCounters are the port's traffic and error counters: PPCNT
	// groups over registers, the IB PMA counters over the kernel.
	PortCounters(ctx context.Context) ([]CounterSet, error)
	// RDMACounters are the RDMA hardware counters (hw_counters).
	RDMACounters(ctx context.Context) ([]CounterSet, error)
	Close() error
}

// ScrapeStarter is implemented by sources that cache within a scrape; the
// exporter calls StartScrape before the first method of each scrape.
type ScrapeStarter interface {
	StartScrape()
}

// ErrUnsupported is matched (errors.Is) by the error of a Source method
// that its backend cannot serve.
var ErrUnsupported = errors.New("not available through this backend")

// Info is what identifies a device. Empty fields are unknown.
type Info struct {
	Model    string // ConnectX-7
	DeviceID string // PCI device ID, 0x1021
	HCAType  string // MT + the PCI device ID in decimal (MT4129), as mlx5_ib names it
	PSID     string
	// Firmware is the running firmware version; FirmwareStored the one in
	// flash (kernel: devlink), when known.
	Firmware, FirmwareStored string
	PartNumber               string // adapter part number (MQIS model name)
	NodeGUID, SysImageGUID   string
	HWRev                    string
	NodeDesc                 string
	RDMA                     string   // RDMA device (mlx5_0)
	Netdevs                  []Netdev // the function's interfaces
}

// Netdev is a network interface of the device and its addresses.
type Netdev struct {
	Name             string
	Address          string // current MAC, "" when unknown
	PermanentAddress string // burnt-in MAC, "" when unknown
	OperState        string
}

// Temperature is one firmware sensor (MTMP, or the mlx5 hwmon channel).
type Temperature struct {
	// Sensor names the sensor: the firmware's name, else "sensor<index>".
	Sensor string
	// Kind is "asic" or "module".
	Kind string
	// Module is the cage of a module sensor, -1 for ASIC sensors.
	Module  int
	Celsius float64
	// Highest is the highest reading recorded; High and Low the
	// firmware's warning thresholds. nil: not given.
	Highest, High, Low *float64
}

// Port is one port's link.
type Port struct {
	Port int // local port, 1-based
	// Module is the cage of the port's module, -1 when unknown.
	Module int
	Lanes  int // 0 unknown
	// OperUp: the link is up. AdminUp: the port is administratively up.
	OperUp, AdminUp *bool
	// SpeedBytesPerSecond is the operating speed (0 while down).
	SpeedBytesPerSecond *float64
	// StateID and PhysStateID are the InfiniBand port states the kernel
	// shows (4 ACTIVE; 5 LinkUp); State and PhysState their names.
	StateID, PhysStateID *int
	State, PhysState     string
	LinkLayer            string // Ethernet, InfiniBand
	Netdev               string
}

// Module is the pluggable module of one port.
type Module struct {
	Port   int
	Module int // cage, -1 when unknown
	// Present says whether a module is plugged (nil: unknown).
	Present *bool
	// Status is the firmware's module state (PMAOS oper_status), "" when
	// not read.
	Status string
	// Reading is the decode the metrics come from: the module's EEPROM
	// when it reads and decodes, else the firmware's view (PDDR page 3).
	Reading *optics.Module
	// Err says why no reading could be had ("" when there is one, or when
	// the cage is empty).
	Err string
}

// CounterSet is one port's counters of one kind.
type CounterSet struct {
	Port int
	// Kind is "ppcnt" (PPCNT groups), "ib" (IB PMA port counters) or
	// "rdma" (RDMA hw_counters); it picks the metric names.
	Kind   string
	Values map[string]float64
}
