package render

import (
	"fmt"
	"image/color"
	"math"
)

// Ramp is a colour scale over [0, 1], linear between its stops.
type Ramp struct {
	stops []color.RGBA
	// truncate cuts the mixed channels instead of rounding them: the
	// communication matrix always has, and its pictures stay as they were.
	truncate bool
}

// HotCold runs from cold (short) to hot (long): ColorBrewer's RdYlBu
// reversed, which stays readable for the common colour-vision deficiencies.
// The variation analysis's hot/cold view (Weber et al.) colours SOS-times
// with it.
var HotCold = Ramp{stops: []color.RGBA{
	{0x31, 0x36, 0x95, 0xff}, {0x45, 0x75, 0xb4, 0xff}, {0x74, 0xad, 0xd1, 0xff}, {0xab, 0xd9, 0xe9, 0xff},
	{0xe0, 0xf3, 0xf8, 0xff}, {0xff, 0xff, 0xbf, 0xff}, {0xfe, 0xe0, 0x90, 0xff}, {0xfd, 0xae, 0x61, 0xff},
	{0xf4, 0x6d, 0x43, 0xff}, {0xd7, 0x30, 0x27, 0xff}, {0xa5, 0x00, 0x26, 0xff},
}}

// Traffic runs from dark blue through cyan and yellow to red: the
// communication matrix's cells, where the dark end stands out against the
// white of pairs that did not communicate.
var Traffic = Ramp{stops: []color.RGBA{
	{0x1b, 0x2a, 0x6b, 255}, {0x1f, 0x9e, 0xc9, 255}, {0xf2, 0xe0, 0x3a, 255}, {0xd7, 0x26, 0x1e, 255},
}, truncate: true}

// At returns the colour of f on the ramp: the cold end for f <= 0 and NaN,
// the hot end from 1.
func (r Ramp) At(f float64) color.RGBA {
	if !(f > 0) {
		return r.stops[0]
	}
	if f >= 1 {
		return r.Hot()
	}
	x := f * float64(len(r.stops)-1)
	i := int(x)
	a, b, t := r.stops[i], r.stops[i+1], x-float64(i)
	mix := func(p, q uint8) uint8 {
		v := float64(p) + t*(float64(q)-float64(p))
		if !r.truncate {
			v = math.Round(v)
		}
		return uint8(v)
	}
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// Cold and Hot are the ends of the ramp.
func (r Ramp) Cold() color.RGBA { return r.stops[0] }
func (r Ramp) Hot() color.RGBA  { return r.stops[len(r.stops)-1] }

// Hex writes c as "#rrggbb".
func Hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }
