// Package modules is the module report of `cxray module` and health's
// modules check: each owned port's module read through the adapter (the
// EEPROM and the firmware's own view), marked against its thresholds,
// verified (the two sources compared, and read again to catch monitors
// that stopped updating) and diagnosed with a verdict and its category.
package modules

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/optics"
)

// Options choose what Read reads.
type Options struct {
	// Ports are the local ports to read; nil reads every owned port.
	Ports []int
	// Raw keeps the raw EEPROM pages in the report.
	Raw bool
	// Verify compares the EEPROM with the firmware's view and reads both
	// again after Interval (on the adapter's clock).
	Verify   bool
	Interval time.Duration
}

// Report is one port's module.
type Report struct {
	Port          int              `json:"port"`
	Module        int              `json:"module"`
	Netdev        string           `json:"netdev,omitempty"`
	EEPROMAccess  string           `json:"eeprom_access"`
	OperStatus    string           `json:"oper_status,omitempty"`
	ErrorType     string           `json:"error_type,omitempty"`
	EEPROM        *optics.Module   `json:"eeprom,omitempty"`
	EEPROMError   string           `json:"eeprom_error,omitempty"`
	Firmware      *optics.Module   `json:"firmware,omitempty"`
	FirmwareError string           `json:"firmware_error,omitempty"`
	Marks         []optics.Mark    `json:"marks"`
	Raw           *optics.Image    `json:"raw,omitempty"`
	Verify        *Verify          `json:"verify,omitempty"`
	Verdicts      []optics.Verdict `json:"verdicts"`

	obs  optics.Observation
	gone []optics.Verdict // the module went away between the verify's reads
}

// Verify is what the verification found.
type Verify struct {
	Comparisons      []optics.Comparison `json:"comparisons"`
	Agree            bool                `json:"agree"`
	IntervalS        float64             `json:"interval_s"`
	EEPROMChanged    int                 `json:"eeprom_monitors_changed"`
	EEPROMMonitors   int                 `json:"eeprom_monitors"`
	FirmwareChanged  int                 `json:"firmware_monitors_changed"`
	FirmwareMonitors int                 `json:"firmware_monitors"`
	// DeviceClockStill: the device's uptime did not move between the
	// reads (an emulator on a stopped clock), so unchanged monitors were
	// not judged frozen.
	DeviceClockStill bool `json:"device_clock_still,omitempty"`
}

// Shown is the decode the report shows: the EEPROM when it decoded, else
// the firmware's view when it identifies a module; and which it is.
func (r *Report) Shown() (*optics.Module, string) {
	if r.EEPROM != nil && r.obs.EEPROMErr == nil {
		return r.EEPROM, "EEPROM (" + r.EEPROMAccess + ")"
	}
	if r.Firmware != nil && r.Firmware.CableType != optics.CableUnplugged && r.Firmware.CableType != optics.CableUnidentified {
		return r.Firmware, "firmware view (PDDR page 3)"
	}
	return nil, ""
}

// Read reads, verifies when asked, and diagnoses the modules of the
// adapter's ports. Only a device error or a port the function does not
// own fails it; a module that cannot be read is a verdict.
func Read(ctx context.Context, a *adapter.Adapter, o Options) ([]*Report, error) {
	ports := o.Ports
	if ports == nil {
		ps, err := a.Ports(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			ports = append(ports, p.Local)
		}
	}
	fwVersion := ""
	if id, err := a.Identity(ctx); err == nil {
		fwVersion = id.Firmware
	} else if ctx.Err() != nil {
		return nil, err
	}
	// The device's own clock around the two reads (verify): see
	// deviceStill.
	var before clockReading
	if o.Verify {
		before = readClocks(ctx, a)
	}
	var reports []*Report
	for _, p := range ports {
		r, err := readOne(ctx, a, p, o.Raw)
		if err != nil {
			return nil, err
		}
		reports = append(reports, r)
	}
	if o.Verify {
		if err := a.Sleep(ctx, o.Interval); err != nil {
			return nil, fmt.Errorf("waiting %v between the two reads: %w; raise --timeout", o.Interval, err)
		}
		for _, r := range reports {
			second, err := readOne(ctx, a, r.Port, false)
			if err != nil {
				return nil, err
			}
			r.verifyWith(second, o.Interval)
			// A module there at the first read and gone at the second
			// is the verdict, alone: the rest compares a module with
			// an empty cage (issue 26.9: it said "no problem found").
			if optics.Present(r.obs) && !optics.Present(second.obs) {
				r.gone = append(r.gone, optics.Gone(r.obs, second.obs))
			}
		}
		still := deviceStill(before, readClocks(ctx, a))
		for _, r := range reports {
			r.obs.DeviceStill = still
			r.Verify.DeviceClockStill = still
		}
	}
	for _, r := range reports {
		r.obs.AdapterFirmware = fwVersion
		if db := a.DB(); db != nil {
			r.obs.Database = db.Revision
		}
		r.Verdicts = r.gone
		if r.Verdicts == nil {
			r.Verdicts = optics.Diagnose(r.obs)
		}
		if r.Verdicts == nil {
			r.Verdicts = []optics.Verdict{}
		}
	}
	return reports, nil
}

// clockReading is the device's uptime and the adapter's clock at one
// moment; ok is false when the device has no uptime to read (the kernel
// backend) or it could not be read.
type clockReading struct {
	uptime time.Duration
	at     time.Time
	ok     bool
}

func readClocks(ctx context.Context, a *adapter.Adapter) clockReading {
	up, err := a.Uptime(ctx)
	return clockReading{uptime: up, at: a.Clock().Now(), ok: err == nil}
}

// deviceStill says the device's time stood still between two readings:
// a second or more passed on the adapter's clock (the uptime counts whole
// seconds, so a working device's moves by at least one), and the
// uptime did not move. It happens only to an emulator on a manual clock
// driven through its config space (emu serve), whose time moves only when
// advanced: monitors that did not move then are not frozen.
func deviceStill(a, b clockReading) bool {
	return a.ok && b.ok && b.at.Sub(a.at) >= time.Second && b.uptime == a.uptime
}

// readOne reads one port's module into a report.
func readOne(ctx context.Context, a *adapter.Adapter, port int, raw bool) (*Report, error) {
	m, err := a.Module(ctx, port, adapter.ModuleOptions{Firmware: true, Full: raw})
	if err != nil {
		return nil, err
	}
	r := &Report{Port: m.Port, Module: m.Module, Netdev: m.Netdev, EEPROMAccess: m.Access, OperStatus: m.OperStatus,
		ErrorType: m.ErrorType, EEPROM: m.EEPROM, Firmware: m.Firmware, Marks: []optics.Mark{}, obs: m.Observation()}
	if m.EEPROMErr != nil {
		r.EEPROMError = m.EEPROMErr.Error()
	}
	if m.FirmwareErr != nil {
		r.FirmwareError = m.FirmwareErr.Error()
	}
	if raw {
		r.Raw = m.Image
	}
	if shown, _ := r.Shown(); shown != nil {
		r.Marks = append(r.Marks, optics.Marks(shown)...)
	}
	return r, nil
}

// verifyWith compares the sources and the two reads.
func (r *Report) verifyWith(second *Report, interval time.Duration) {
	v := &Verify{IntervalS: interval.Seconds(), Comparisons: optics.Compare(r.obs.EEPROM, r.obs.Firmware)}
	if r.obs.EEPROMErr != nil {
		v.Comparisons = []optics.Comparison{}
	}
	v.Agree = true
	for _, c := range v.Comparisons {
		if !c.OK {
			v.Agree = false
		}
	}
	r.obs.Verified = true
	r.obs.Comparisons = v.Comparisons
	r.obs.Interval = interval
	if second.obs.EEPROMErr == nil {
		r.obs.EEPROM2 = second.obs.EEPROM
	}
	r.obs.Firmware2 = second.obs.Firmware
	v.EEPROMChanged, v.EEPROMMonitors = optics.Changed(r.obs.EEPROM, r.obs.EEPROM2)
	v.FirmwareChanged, v.FirmwareMonitors = optics.Changed(r.obs.Firmware, r.obs.Firmware2)
	r.Verify = v
}

// Verdicts counts the verdicts of the reports.
func Verdicts(rs []*Report) int {
	n := 0
	for _, r := range rs {
		n += len(r.Verdicts)
	}
	return n
}

// IsNoPort says err is a port the function does not own (a usage error).
func IsNoPort(err error) bool {
	var np *adapter.NoPortError
	return errors.As(err, &np)
}

// FromImage reports on a module memory read elsewhere (a file: ethtool -m
// DEV raw on), decoded and diagnosed as a read from a device is, with
// source naming where it came from. No firmware view: PMAOS and PDDR are
// the adapter's.
func FromImage(im *optics.Image, source string, raw bool) *Report {
	dec, derr := optics.Decode(im)
	r := &Report{Port: 0, Module: -1, EEPROMAccess: source, EEPROM: dec, Marks: []optics.Mark{}}
	if derr != nil {
		r.EEPROMError = derr.Error()
	}
	if raw {
		r.Raw = im
	}
	r.obs = optics.Observation{Module: -1, EEPROM: dec, EEPROMErr: derr}
	if shown, _ := r.Shown(); shown != nil {
		r.Marks = append(r.Marks, optics.Marks(shown)...)
	}
	r.Verdicts = optics.Diagnose(r.obs)
	if r.Verdicts == nil {
		r.Verdicts = []optics.Verdict{}
	}
	return r
}
