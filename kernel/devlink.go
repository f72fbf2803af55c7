package kernel

import (
	"context"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
)

// DevlinkInfo is `devlink dev info pci/<bdf>`: what the driver reports
// about the firmware, readable without privilege.
type DevlinkInfo struct {
	Handle            string `json:"handle"` // pci/0000:c1:00.0
	Driver            string `json:"driver,omitempty"`
	SerialNumber      string `json:"serial_number,omitempty"`
	BoardSerialNumber string `json:"board_serial_number,omitempty"`
	// Fixed, Running and Stored are the version lists by name. mlx5 gives
	// fixed fw.psid, running fw.version and stored fw.version (the image
	// that runs after the next reset).
	Fixed   map[string]string `json:"fixed"`
	Running map[string]string `json:"running"`
	Stored  map[string]string `json:"stored"`
}

// PSID is the board's PSID (fixed fw.psid).
func (i *DevlinkInfo) PSID() string { return i.Fixed["fw.psid"] }

// FirmwareRunning is the firmware version in use.
func (i *DevlinkInfo) FirmwareRunning() string { return i.Running["fw.version"] }

// FirmwareStored is the firmware version in flash.
func (i *DevlinkInfo) FirmwareStored() string { return i.Stored["fw.version"] }

// FirmwarePending says a different image is in flash and runs after the
// next reset.
func (i *DevlinkInfo) FirmwarePending() bool {
	s, r := i.FirmwareStored(), i.FirmwareRunning()
	return s != "" && r != "" && s != r
}

// DevlinkInfo asks devlink for the function's firmware versions and PSID.
func (d *Device) DevlinkInfo(ctx context.Context) (*DevlinkInfo, error) {
	handle := "pci/" + d.BDF
	c, fam, unbind, err := d.genl(ctx, linuxabi.DEVLINK_GENL_NAME)
	if err != nil {
		return nil, err
	}
	defer func() { unbind(); c.Close() }()
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, "pci")
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, d.BDF)
	body, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("kernel: encoding the devlink request: %v", err)
	}
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: linuxabi.DEVLINK_CMD_INFO_GET, Version: fam.Version},
		Data:   body,
	}, fam.ID, netlink.Request)
	if err != nil {
		return nil, netlinkErr(ctx, "devlink info of "+handle, err, "")
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("kernel: devlink info of %s: %d answers to one request", handle, len(msgs))
	}
	info, err := parseDevlinkInfo(msgs[0].Data)
	if err != nil {
		return nil, fmt.Errorf("kernel: devlink info of %s: %v", handle, err)
	}
	return info, nil
}

// parseDevlinkInfo decodes the attributes of a DEVLINK_CMD_INFO_GET reply.
// Unknown attributes are skipped: newer kernels add some.
func parseDevlinkInfo(b []byte) (*DevlinkInfo, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	info := &DevlinkInfo{Fixed: map[string]string{}, Running: map[string]string{}, Stored: map[string]string{}}
	var bus, dev string
	for ad.Next() {
		switch ad.Type() {
		case linuxabi.DEVLINK_ATTR_BUS_NAME:
			bus = ad.String()
		case linuxabi.DEVLINK_ATTR_DEV_NAME:
			dev = ad.String()
		case linuxabi.DEVLINK_ATTR_INFO_DRIVER_NAME:
			info.Driver = ad.String()
		case linuxabi.DEVLINK_ATTR_INFO_SERIAL_NUMBER:
			info.SerialNumber = ad.String()
		case linuxabi.DEVLINK_ATTR_INFO_BOARD_SERIAL_NUMBER:
			info.BoardSerialNumber = ad.String()
		case linuxabi.DEVLINK_ATTR_INFO_VERSION_FIXED, linuxabi.DEVLINK_ATTR_INFO_VERSION_RUNNING, linuxabi.DEVLINK_ATTR_INFO_VERSION_STORED:
			dst := map[uint16]map[string]string{
				linuxabi.DEVLINK_ATTR_INFO_VERSION_FIXED:   info.Fixed,
				linuxabi.DEVLINK_ATTR_INFO_VERSION_RUNNING: info.Running,
				linuxabi.DEVLINK_ATTR_INFO_VERSION_STORED:  info.Stored,
			}[ad.Type()]
			ad.Nested(func(nad *netlink.AttributeDecoder) error {
				var name, value string
				for nad.Next() {
					switch nad.Type() {
					case linuxabi.DEVLINK_ATTR_INFO_VERSION_NAME:
						name = nad.String()
					case linuxabi.DEVLINK_ATTR_INFO_VERSION_VALUE:
						value = nad.String()
					}
				}
				if name == "" {
					return fmt.Errorf("a version entry without a name")
				}
				dst[name] = value
				return nil
			})
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if bus != "" || dev != "" {
		info.Handle = bus + "/" + dev
	}
	return info, nil
}
