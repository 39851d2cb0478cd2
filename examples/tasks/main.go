// Tasks renders the Mandelbrot set the way Go code splits work: a
// goroutine per tile through errgroup, with no worker pool and no
// *measure.Location anywhere. Each goroutine records its regions with
// measure.StartRegion; the measurement hands it a lane (a reusable
// location) at its first region and takes it back when another goroutine
// needs one, so the trace has as many lanes as tiles rendered at once, not
// one per goroutine, and keeps every event. At the end the trace is written
// and its summary printed.
//
//	go run ./examples/tasks [-size 1024] [-tile 16] [-limit 0]
//
// -limit bounds the goroutines at once (errgroup's SetLimit; 0: none). The
// HMB_* environment variables configure the measurement.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
	"golang.org/x/sync/errgroup"
)

// The program's regions, declared once; each binds to the running
// measurement at its first use.
var (
	regionMain   = measure.NewRegion("main")
	regionRender = measure.NewRegion("render")
	regionTile   = measure.NewRegion("tile")
	regionRow    = measure.NewRegion("row")
)

func main() {
	size := flag.Int("size", 1024, "image width and height in pixels")
	tile := flag.Int("tile", 16, "tile width and height in pixels")
	limit := flag.Int("limit", 0, "goroutines at once (0: no limit)")
	flag.Parse()
	if err := run(*size, *tile, *limit); err != nil {
		fmt.Fprintln(os.Stderr, "tasks:", err)
		os.Exit(1)
	}
}

func run(size, tile, limit int) error {
	if size <= 0 || tile <= 0 {
		return fmt.Errorf("-size %d and -tile %d must be positive", size, tile)
	}
	cfg, err := measure.ConfigFromEnv()
	if err != nil {
		return err
	}
	if cfg.Name == "" {
		cfg.Name = "tasks"
	}
	m, err := measure.Start(cfg)
	if err != nil {
		return err
	}
	defer m.Close()

	ctx := context.Background()
	img := make([]uint8, size*size)
	sp := measure.StartRegion(ctx, regionMain)
	tiles, err := render(ctx, img, size, tile, limit)
	sp.End()
	if err != nil {
		return err
	}
	if err := m.Close(); err != nil {
		return err
	}

	st := m.Stats()
	fmt.Printf("%d tiles, one goroutine each: %d lanes; %d events recorded, %d kept (%.1f %%)\n",
		tiles, len(st.Locations), st.Recorded, st.Kept, 100*float64(st.Kept)/float64(max(st.Recorded, 1)))
	fmt.Printf("trace: %s\n\n", m.Path())
	f, err := tracefile.Open(m.Path())
	if err != nil {
		return err
	}
	defer f.Close()
	return summary.Write(os.Stdout, []*tracefile.File{f})
}

// render computes the image tile by tile, a goroutine per tile.
func render(ctx context.Context, img []uint8, size, tile, limit int) (tiles int, err error) {
	defer measure.StartRegion(ctx, regionRender).End()
	g, ctx := errgroup.WithContext(ctx)
	if limit > 0 {
		g.SetLimit(limit)
	}
	for y0 := 0; y0 < size; y0 += tile {
		for x0 := 0; x0 < size; x0 += tile {
			tiles++
			g.Go(func() error {
				defer measure.StartRegion(ctx, regionTile).End()
				for y := y0; y < min(y0+tile, size); y++ {
					row(ctx, img[y*size:(y+1)*size], y, x0, min(x0+tile, size), size)
				}
				return nil
			})
		}
	}
	return tiles, g.Wait()
}

// row computes pixels x0 to x1 of row y.
func row(ctx context.Context, pix []uint8, y, x0, x1, size int) {
	defer measure.StartRegion(ctx, regionRow).End()
	ci := 3*float64(y)/float64(size) - 1.5
	for x := x0; x < x1; x++ {
		cr := 3*float64(x)/float64(size) - 2
		zr, zi := 0.0, 0.0
		n := 0
		for ; n < 255 && zr*zr+zi*zi < 4; n++ {
			zr, zi = zr*zr-zi*zi+cr, 2*zr*zi+ci
		}
		pix[x] = uint8(n)
	}
}
