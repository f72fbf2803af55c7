package kernel

import (
	"context"
	"errors"
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
)

// ethtool netlink module EEPROM attributes (uapi linux/ethtool_netlink.h,
// ETHTOOL_A_MODULE_EEPROM_*); x/sys does not name them.
const (
	attrEEPROMHeader  = 1 // nest: ETHTOOL_A_HEADER_*
	attrEEPROMOffset  = 2 // u32
	attrEEPROMLength  = 3 // u32
	attrEEPROMPage    = 4 // u8
	attrEEPROMBank    = 5 // u8
	attrEEPROMI2CAddr = 6 // u8
	attrEEPROMData    = 7 // binary
)

// I2C addresses of module memory.
const (
	I2CA0 = 0x50 // identifier page; all of SFF-8636 and CMIS
	I2CA2 = 0x51 // SFF-8472 diagnostics (SFP A2h)
)

// PageRequest is one read of module memory, as ethtool netlink takes it.
type PageRequest struct {
	I2CAddress uint8  `json:"i2c_address"`
	Bank       uint8  `json:"bank"`
	Page       uint8  `json:"page"`
	Offset     uint16 `json:"offset"` // 0..255; below 128 only on page 0
	Length     uint16 `json:"length"` // 1..128, not crossing offset 128
}

// RequestError is a page request the kernel would refuse; checked here so
// the message can say why.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return "kernel: module EEPROM request: " + e.Msg }

// Validate applies the kernel's rules for module EEPROM reads.
func (r PageRequest) Validate() error {
	switch {
	case r.Length == 0 || r.Length > 128:
		return &RequestError{fmt.Sprintf("length %d: read 1 to 128 bytes at a time", r.Length)}
	case r.Offset > 255:
		return &RequestError{fmt.Sprintf("offset %d: a page is 256 bytes (0-127 lower, 128-255 upper)", r.Offset)}
	case int(r.Offset)+int(r.Length) > 256:
		return &RequestError{fmt.Sprintf("offset %d + length %d runs past byte 255", r.Offset, r.Length)}
	case r.Offset < 128 && int(r.Offset)+int(r.Length) > 128:
		return &RequestError{fmt.Sprintf("offset %d + length %d crosses byte 128: read the lower and the upper half separately", r.Offset, r.Length)}
	case r.Offset < 128 && r.Page != 0:
		return &RequestError{fmt.Sprintf("page %d, offset %d: the lower half (0-127) is the same for every page; ask for it with page 0", r.Page, r.Offset)}
	case r.I2CAddress > 0x7f:
		return &RequestError{fmt.Sprintf("I2C address 0x%x: 7-bit addresses only (0x50 or 0x51)", r.I2CAddress)}
	}
	return nil
}

// ReadModuleEEPROM reads raw module memory through ethtool netlink
// (ETHTOOL_MSG_MODULE_EEPROM_GET). The kernel requires CAP_NET_ADMIN; when
// it is missing the error is a *PermissionError that says how to get it.
func (d *Device) ReadModuleEEPROM(ctx context.Context, netdev string, r PageRequest) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if err := checkIfname(netdev); err != nil {
		return nil, err
	}
	what := "module EEPROM of " + netdev
	c, fam, unbind, err := d.genl(ctx, linuxabi.ETHTOOL_GENL_NAME)
	if err != nil {
		return nil, err
	}
	defer func() { unbind(); c.Close() }()
	return readPage(ctx, c, fam, netdev, what, r)
}

func readPage(ctx context.Context, c *genetlink.Conn, fam genetlink.Family, netdev, what string, r PageRequest) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Nested(attrEEPROMHeader, func(nae *netlink.AttributeEncoder) error {
		nae.String(linuxabi.ETHTOOL_A_HEADER_DEV_NAME, netdev)
		return nil
	})
	ae.Uint32(attrEEPROMOffset, uint32(r.Offset))
	ae.Uint32(attrEEPROMLength, uint32(r.Length))
	ae.Uint8(attrEEPROMPage, r.Page)
	ae.Uint8(attrEEPROMBank, r.Bank)
	ae.Uint8(attrEEPROMI2CAddr, r.I2CAddress)
	body, err := ae.Encode()
	if err != nil {
		return nil, fmt.Errorf("kernel: encoding the module EEPROM request: %v", err)
	}
	msgs, err := c.Execute(genetlink.Message{
		Header: genetlink.Header{Command: linuxabi.ETHTOOL_MSG_MODULE_EEPROM_GET, Version: linuxabi.ETHTOOL_GENL_VERSION},
		Data:   body,
	}, fam.ID, netlink.Request)
	if err != nil {
		return nil, netlinkErr(ctx, what, err, fmt.Sprintf(" (i2c 0x%02x, bank %d, page 0x%02x, offset %d, length %d)", r.I2CAddress, r.Bank, r.Page, r.Offset, r.Length))
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("kernel: %s: %d answers to one request", what, len(msgs))
	}
	data, err := parseEEPROMReply(msgs[0].Data)
	if err != nil {
		return nil, fmt.Errorf("kernel: %s: %v", what, err)
	}
	if len(data) != int(r.Length) {
		return nil, fmt.Errorf("kernel: %s: asked for %d bytes, the kernel gave %d", what, r.Length, len(data))
	}
	return data, nil
}

// parseEEPROMReply takes the data out of an ETHTOOL_MSG_MODULE_EEPROM_GET
// reply; the header nest and unknown attributes are skipped.
func parseEEPROMReply(b []byte) ([]byte, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, err
	}
	var data []byte
	found := false
	for ad.Next() {
		if ad.Type() == attrEEPROMData {
			data, found = ad.Bytes(), true
		}
	}
	if err := ad.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("the reply has no data attribute")
	}
	return data, nil
}

// ZeroPageError is a lower page of all zeros. Before Linux commit
// d1c94bc5b90c (Nov 2025, backported to 6.6 and 6.12) mlx5 answered a
// failed module read with success and a zero-filled buffer; a real module
// never has identifier 0 and all-zero status bytes.
type ZeroPageError struct{ Netdev string }

func (e *ZeroPageError) Error() string {
	return fmt.Sprintf("kernel: the module EEPROM of %s reads as all zeros: no module, a module that does not answer, or a kernel without the mlx5 fix d1c94bc5b90c that reports failed reads as zeros; reseat the module, or compare with direct access (MCIA)", e.Netdev)
}
