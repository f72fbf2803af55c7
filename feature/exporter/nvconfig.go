package exporter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/feature/policy"
	"github.com/cxray/cxray/nvconf"
)

// Families of the nvconfig, identity (firmware) and policy collectors: the
// fleet's drift as data (docs/exporter.md, "Drift").
var (
	famNVValue = gauge("cxray_nvconfig_value",
		"An NV configuration parameter as a number (mlxconfig's name; an enum by its value, True 1): config=current is what the firmware runs, config=next_boot what it runs after the next firmware reset. Text and byte parameters are left out.",
		"device", "parameter", "config")
	famNVPending = gauge("cxray_nvconfig_pending_parameters",
		"Parameters whose Next Boot value differs from the Current one: changes that wait for a firmware reset.",
		"device")
	famNVDropped = gauge("cxray_nvconfig_parameters_dropped",
		"Numeric parameters left out because the device has more than --collector.nvconfig.max-parameters of them (0 normally).",
		"device")
	famNVReadTime = gauge("cxray_nvconfig_read_timestamp_seconds",
		"When the NV configuration served was read (it is read again every --collector.nvconfig.interval), in Unix seconds.",
		"device")
	famFirmware = gauge("cxray_firmware_info",
		"The running firmware and the PSID (value 1): count by (psid, firmware_version) finds the fleet's versions.",
		"device", "psid", "firmware_version")
	famPolicyViolations = gauge("cxray_policy_violations",
		"Expectations of the --policy file the device departs from, per check (firmware, nv, link, pcie); 0 when it complies.",
		"device", "check")
	famPolicyUnchecked = gauge("cxray_policy_unchecked",
		"Expectations of the --policy file that could not be checked on the device (a reading the backend does not give), per check.",
		"device", "check")
	famPolicyApplies = gauge("cxray_policy_applies",
		"1 when a policy of the --policy file selects the device (nicType, pciAddresses, partNumbers), 0 when none does.",
		"device")
)

// nvCache is a device's last NV configuration read.
type nvCache struct {
	at  time.Time
	res *nvconf.QueryResult
}

// registerSource is a source with a register path (an adapter).
type registerSource interface {
	Registers(ctx context.Context) (*dev.Device, error)
}

// Registers reaches the opened source's register path.
func (l *lazySource) Registers(ctx context.Context) (*dev.Device, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	rs, ok := s.(registerSource)
	if !ok {
		return nil, &adapter.UnsupportedError{What: "NV configuration", Why: "the source has no register path"}
	}
	return rs.Registers(ctx)
}

// pcieSource is a source that reads its PCI Express link (an adapter;
// lazySource's PCIe is in pcie.go).
type pcieSource interface {
	PCIe(ctx context.Context) (*adapter.PCIe, error)
}

var errNoNVDB = &adapter.UnsupportedError{What: "NV configuration", Why: "no NV parameter database"}

// nvConfig is the device's NV configuration (Default, Current, Next
// Boot), read again once the interval has passed.
func (e *Exporter) nvConfig(ctx context.Context, d *device) (*nvconf.QueryResult, time.Time, error) {
	if e.opts.NV == nil {
		return nil, time.Time{}, errNoNVDB
	}
	interval := e.opts.NVInterval
	if interval == 0 {
		interval = DefaultNVInterval
	}
	d.mu.Lock()
	c := d.nv
	d.mu.Unlock()
	if c.res != nil && time.Since(c.at) < interval {
		return c.res, c.at, nil
	}
	rs, ok := d.src.(registerSource)
	if !ok {
		return nil, time.Time{}, &adapter.UnsupportedError{What: "NV configuration", Why: "the source has no register path"}
	}
	rd, err := rs.Registers(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	s, err := nvconf.Open(ctx, rd, e.opts.NV)
	if err != nil {
		return nil, time.Time{}, err
	}
	res, err := s.Query(ctx, nvconf.QueryOptions{Extended: true})
	if err != nil {
		return nil, time.Time{}, err
	}
	now := time.Now()
	d.mu.Lock()
	d.nv = nvCache{at: now, res: res}
	d.mu.Unlock()
	return res, now, nil
}

func collectNVConfig(ctx context.Context, s *sink, _ Source) error {
	res, at, err := s.e.nvConfig(ctx, s.d)
	if err != nil {
		return err
	}
	limit := s.e.opts.NVMaxParams
	if limit == 0 {
		limit = DefaultNVMaxParams
	}
	kept, dropped, pending := 0, 0, 0
	for _, st := range res.Settings {
		if st.Pending {
			pending++
		}
		if inc := s.e.opts.NVInclude; inc != nil && !inc.MatchString(st.Name) {
			continue
		}
		if st.Next == nil || !st.Next.Numeric {
			continue
		}
		if kept == limit {
			dropped++
			continue
		}
		kept++
		s.add(famNVValue, float64(st.Next.Raw), st.Name, "next_boot")
		if st.Current != nil && st.Current.Numeric {
			s.add(famNVValue, float64(st.Current.Raw), st.Name, "current")
		}
	}
	if res.ReadCurrent {
		s.add(famNVPending, float64(pending))
	}
	s.add(famNVDropped, float64(dropped))
	s.add(famNVReadTime, float64(at.UnixNano())/1e9)
	return nil
}

func collectPolicy(ctx context.Context, s *sink, src Source) error {
	set := s.e.opts.Policy
	if set == nil {
		return &adapter.UnsupportedError{What: "policy", Why: "no --policy file"}
	}
	f := policy.Facts{BDF: src.Name()}
	var errs []error
	id, err := src.Identity(ctx)
	if id == nil {
		return err
	}
	f.Identity = id
	f.Links, f.LinksErr = src.Links(ctx)
	if f.LinksErr != nil && !errors.Is(f.LinksErr, ErrUnsupported) {
		errs = append(errs, f.LinksErr)
	}
	if res, _, err := s.e.nvConfig(ctx, s.d); err != nil {
		f.NVErr = err
		if !errors.Is(err, ErrUnsupported) {
			errs = append(errs, fmt.Errorf("NV configuration: %w", err))
		}
	} else {
		f.NV = res.Settings
	}
	if ps, ok := src.(pcieSource); ok {
		if p, err := ps.PCIe(ctx); err == nil || p != nil {
			f.PCIe = policy.PCIeOf(p)
		}
	}
	findings, applied := set.Check(f)
	s.add(famPolicyApplies, boolf(applied))
	if !applied {
		return errors.Join(errs...)
	}
	bad := policy.Violations(findings)
	unchecked := map[string]int{}
	for _, fd := range findings {
		if fd.Unchecked {
			unchecked[fd.Check]++
		}
	}
	has := set.Has(f)
	for _, c := range policy.Checks {
		if has[c] {
			s.add(famPolicyViolations, float64(bad[c]), c)
			s.add(famPolicyUnchecked, float64(unchecked[c]), c)
		}
	}
	return errors.Join(errs...)
}
