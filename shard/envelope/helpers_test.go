package envelope

import (
	"encoding/base64"
	"encoding/hex"
)

func b64(b []byte) string   { return base64.StdEncoding.EncodeToString(b) }
func hexOf(b []byte) string { return hex.EncodeToString(b) }
