package rdma

import (
	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/scenario"
)

// ConfigOf turns a scenario's RDMA path into a model Config.
func ConfigOf(s scenario.RDMASpec) Config {
	return Config{Loss: s.Loss, RTT: s.RTT, LogWindow: s.LogWindow, Share: s.Share, Priority: s.Priority}
}

// ForAdapter builds the model of a scenario adapter on the path its
// scenario gives: the device's rdma key for every port, each port's own
// rdma key over it (a port that gives no log_window keeps the device's).
// clk is the emulation's clock.
func ForAdapter(a *scenario.Adapter, clk emu.Clock) (*Model, error) {
	var cfg Config
	if a != nil && a.Spec != nil {
		cfg = ConfigOf(a.Spec.RDMA)
	}
	m, err := New(a, clk, cfg)
	if err != nil {
		return nil, err
	}
	if a.Spec != nil {
		for port, ps := range a.Spec.PortRDMA {
			c := ConfigOf(ps)
			if c.LogWindow == 0 {
				c.LogWindow = cfg.LogWindow
			}
			if err := m.SetPortConfig(port, c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
