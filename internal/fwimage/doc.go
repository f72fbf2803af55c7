// Package fwimage reads and writes ConnectX firmware image files in the
// FS4 layout (the .bin files NVIDIA ships for ConnectX-5 and later) and
// compares firmware versions. Package fwimage/mfa2 reads and writes the
// MFA2 packages that wrap such images for several boards.
//
// What Parse reads, and Build writes, is the part of the layout a query
// needs: the image start magic, the hardware pointers, the tools area,
// boot2, the ITOC with its IMAGE_INFO section (version, release date,
// PSID, part number, description, supported hardware IDs) and the DTOC at
// the end of the file with MFG_INFO (the board's original PSID and base
// GUID/MAC) and DEV_INFO. Every header, entry and section carries a CRC,
// and Parse checks them all, so a cut or damaged file is an error, never
// a reading. The offsets and CRCs come from mstflint's documented layout
// (tools_layouts/image_layout_layouts.c, tools_layouts/cx4fw_layouts.c,
// mlxfwops/lib/fs4_ops.cpp; see docs/firmware.md "The FS4 layout"): the
// register database does not describe image files.
//
// Build makes synthetic images for the emulated adapters (cxray emu
// image): they carry no firmware code, only what identifies them, and a
// signature section that the emulator, and nothing else, verifies.
package fwimage
