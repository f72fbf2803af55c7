package exporter

import (
	"context"
	"sync"

	"github.com/cxray/cxray/adapter"
)

// Lazy is a source opened on first use and opened again after it failed
// to open: a device that is held by another tool or absent when the
// exporter starts is served as down and retried on every scrape, while the
// other devices are served.
func Lazy(name, backend string, open func(ctx context.Context) (Source, error)) Source {
	return &lazySource{name: name, backend: backend, open: open}
}

type lazySource struct {
	name, backend string
	open          func(ctx context.Context) (Source, error)

	mu  sync.Mutex
	src Source
}

func (l *lazySource) get(ctx context.Context) (Source, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src != nil {
		return l.src, nil
	}
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	l.src = s
	return s, nil
}

func (l *lazySource) Name() string { return l.name }

func (l *lazySource) Backend() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src != nil {
		return l.src.Backend()
	}
	return l.backend
}

func (l *lazySource) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.src == nil {
		return nil
	}
	err := l.src.Close()
	l.src = nil
	return err
}

func (l *lazySource) Identity(ctx context.Context) (*adapter.Identity, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Identity(ctx)
}

func (l *lazySource) OS(ctx context.Context) (*adapter.OS, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.OS(ctx)
}

func (l *lazySource) Ports(ctx context.Context) ([]adapter.Port, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Ports(ctx)
}

func (l *lazySource) Links(ctx context.Context) ([]adapter.Link, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Links(ctx)
}

func (l *lazySource) Temperatures(ctx context.Context) ([]adapter.Temperature, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Temperatures(ctx)
}

func (l *lazySource) Modules(ctx context.Context) ([]*adapter.ModuleReading, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.Modules(ctx)
}

func (l *lazySource) PortCounters(ctx context.Context) ([]adapter.CounterSet, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.PortCounters(ctx)
}

func (l *lazySource) RDMACounters(ctx context.Context) ([]adapter.CounterSet, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.RDMACounters(ctx)
}
