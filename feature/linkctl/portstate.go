package linkctl

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/prm/regpath"
)

// PAOS admin_status values (the PRM's PAOS table; the same in every
// revision, some of which name none).
const (
	adminUp   = 1
	adminDown = 2
)

// ToggleSettle is how long a toggle keeps the port down before bringing it
// up: mlxlink waits 2 s after its down command before checking it.
const ToggleSettle = 2 * time.Second

// PortState plans mlxlink's --port_state: UP, DN (down) or TG (toggle:
// down, ToggleSettle, up), as PAOS writes of admin_status with its enable
// bit (ase).
func PortState(ctx context.Context, ad *adapter.Adapter, local int, state string) (*Change, error) {
	state = strings.ToUpper(strings.TrimSpace(state))
	if state != "UP" && state != "DN" && state != "TG" {
		return nil, inputErr("--port_state %q: give UP, DN (down) or TG (toggle)", state)
	}
	pt, err := openPort(ctx, ad, local)
	if err != nil {
		return nil, err
	}
	idx := pt.index("PAOS")
	cur, err := pt.read(ctx, "PAOS", idx)
	if err != nil {
		return nil, err
	}
	prev, ok := adapter.FieldOf(cur, "PAOS", regpath.PAOSAdminStatus)
	if !ok {
		return nil, fmt.Errorf("PAOS: no admin_status in this database's layout")
	}
	set := func(v int, settle time.Duration) Write {
		return Write{Register: "PAOS", Index: idx, Fields: []Field{{regpath.PAOSAdminStatus, strconv.Itoa(v)}, {regpath.PAOSASE, "1"}}, Settle: settle}
	}
	c := pt.change("port_state " + state)
	var ws []Write
	who := fmt.Sprintf("port %d", local)
	if pt.p.Netdev != "" {
		who += " (" + pt.p.Netdev + ")"
	}
	switch state {
	case "UP":
		ws, c.expect = []Write{set(adminUp, 0)}, "up"
		c.Effects = []string{who + " is enabled: the link trains and comes up in a few seconds if the partner and the cable allow"}
	case "DN":
		ws, c.expect = []Write{set(adminDown, 0)}, "down"
		c.Effects = []string{who + " goes down and stays down until --port_state UP: every connection through it stops"}
	case "TG":
		ws, c.expect = []Write{set(adminDown, ToggleSettle), set(adminUp, 0)}, "up"
		c.Effects = []string{fmt.Sprintf("%s drops for about %v, then trains again: traffic through it stops meanwhile", who, ToggleSettle)}
	}
	if err := pt.plan(ctx, c, ws); err != nil {
		return nil, err
	}
	c.Undo = []Write{set(int(prev), 0)}
	switch prev {
	case adminUp:
		c.UndoFlags = "--port_state UP"
	case adminDown:
		c.UndoFlags = "--port_state DN"
	}
	return c, nil
}
