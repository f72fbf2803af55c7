package nvstore

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/cxray/cxray/emu/fw"
)

// installed remembers the store of each firmware, without keeping the
// firmware alive: Install is idempotent and Lookup finds the store from the
// firmware (the scenario builder and the CLI both reach the firmware, not
// the store).
var installed sync.Map // weak.Pointer[fw.Firmware] -> *Store

// Install gives the firmware its NV configuration: it builds a store from
// the defaults (the adapter's ports and modules from the firmware's spec)
// and installs the behaviours of MNVQC, MNVGC, MNVDA, MNVDI, MNVIA, MNVGN
// and MFRL. Installing again returns the store already installed and
// leaves it as it is. Registers the firmware's PRM database lacks are
// skipped.
func Install(f *fw.Firmware, d Defaults) (*Store, error) {
	if f == nil {
		return nil, fmt.Errorf("nvstore: no firmware")
	}
	key := weak.Make(f)
	if s, ok := installed.Load(key); ok {
		return s.(*Store), nil
	}
	spec := f.Spec()
	d = d.Merge(identityDefaults(spec))
	s, err := New(Options{PRM: f.DB(), Ports: len(spec.Ports), Modules: len(spec.Modules), Defaults: d})
	if err != nil {
		return nil, err
	}
	if prev, loaded := installed.LoadOrStore(key, s); loaded {
		return prev.(*Store), nil
	}
	runtime.AddCleanup(f, func(k weak.Pointer[fw.Firmware]) { installed.Delete(k) }, key)
	for name, b := range s.Behaviours() {
		if _, err := f.DB().Register(name); err != nil {
			continue // an older database without this register
		}
		if err := f.SetBehaviour(name, b); err != nil {
			return nil, fmt.Errorf("nvstore: %w", err)
		}
	}
	return s, nil
}

// InstallProfile installs the NV defaults of an emulator profile (the
// common adapter defaults for a profile without its own).
func InstallProfile(f *fw.Firmware, profile string) (*Store, error) {
	d, _ := ProfileDefaults(profile)
	return Install(f, d)
}

// Lookup returns the store installed on a firmware.
func Lookup(f *fw.Firmware) (*Store, bool) {
	if f == nil {
		return nil, false
	}
	s, ok := installed.Load(weak.Make(f))
	if !ok {
		return nil, false
	}
	return s.(*Store), true
}

// identityDefaults are the board's base MAC and GUID as the NV store keeps
// them (nv_base_mac_guid, what mstflint q shows as Base MAC/GUID), with one
// MAC and GUID per port allocated. The adapter's spec is the one truth, so
// MGIR, PGUID and the NV store agree.
func identityDefaults(spec fw.Spec) Defaults {
	d := Defaults{Factory: map[string]string{}}
	put := func(field string, v uint64) {
		d.Factory["nv_base_mac_guid."+field] = fmt.Sprintf("%016x", v) // 8 bytes, big-endian
	}
	if spec.BaseMAC != 0 {
		put("base_mac", spec.BaseMAC)
	}
	if spec.BaseGUID != 0 {
		put("base_guid", spec.BaseGUID)
	}
	n := fmt.Sprint(max(len(spec.Ports), 1))
	d.Factory["nv_base_mac_guid_cap.num_of_allocated_macs"] = n
	d.Factory["nv_base_mac_guid_cap.num_of_allocated_guids"] = n
	return d
}
