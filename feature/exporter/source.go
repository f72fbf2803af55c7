package exporter

import (
	"context"

	"github.com/cxray/cxray/adapter"
)

// Source is one device the exporter reads: an adapter, or a fake in
// tests. Every method takes the scrape's context and must return once it
// ends. A method a backend cannot serve returns an error matching
// ErrUnsupported; its collector is then left out for that device rather
// than reported as failing.
//
// The exporter calls at most one method of a Source at a time.
type Source interface {
	// Name is the value of the device label: the PCI address.
	Name() string
	// Backend is how the device is read: "direct", "emulator", "kernel".
	Backend() string
	Identity(ctx context.Context) (*adapter.Identity, error)
	OS(ctx context.Context) (*adapter.OS, error)
	Ports(ctx context.Context) ([]adapter.Port, error)
	Links(ctx context.Context) ([]adapter.Link, error)
	Temperatures(ctx context.Context) ([]adapter.Temperature, error)
	Modules(ctx context.Context) ([]*adapter.ModuleReading, error)
	PortCounters(ctx context.Context) ([]adapter.CounterSet, error)
	RDMACounters(ctx context.Context) ([]adapter.CounterSet, error)
	Close() error
}

// ErrUnsupported is matched (errors.Is) by the error of a Source method
// that its backend cannot serve.
//
// Deprecated: match errors.ErrUnsupported, the one name of the kind.
var ErrUnsupported = adapter.ErrUnsupported

// FromAdapter makes an adapter a Source: the device label is its PCI
// address, and modules are read for their metrics (the EEPROM, the
// firmware's view only when the EEPROM gives nothing).
func FromAdapter(a *adapter.Adapter) Source { return adapterSource{a} }

type adapterSource struct{ *adapter.Adapter }

func (s adapterSource) Name() string {
	if b := s.BDF(); b != "" {
		return b
	}
	return s.Adapter.Name()
}

// Identity is read on every scrape: the exporter outlives firmware
// burns and resets, which the adapter's kept identity would not show.
func (s adapterSource) Identity(ctx context.Context) (*adapter.Identity, error) {
	return s.Adapter.ReadIdentity(ctx)
}

func (s adapterSource) Backend() string { return string(s.Adapter.Backend()) }

func (s adapterSource) Modules(ctx context.Context) ([]*adapter.ModuleReading, error) {
	return s.Adapter.Modules(ctx, adapter.ModuleOptions{})
}
