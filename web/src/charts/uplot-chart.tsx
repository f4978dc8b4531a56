// A thin React wrapper over uPlot: create once per option set, setData on new data, follow the
// container's width.
import { useEffect, useRef } from "react";
import uPlot, { type AlignedData, type Options } from "uplot";
import "uplot/dist/uPlot.min.css";

export function UPlotChart(props: { options: Omit<Options, "width">; data: AlignedData; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = useRef(props.data);
  data.current = props.data;

  useEffect(() => {
    const el = box.current!;
    const p = new uPlot({ ...props.options, width: el.clientWidth || 320 }, data.current, el);
    plot.current = p;
    const resize = new ResizeObserver(() => p.setSize({ width: el.clientWidth || 320, height: props.options.height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      p.destroy();
      plot.current = null;
    };
  }, [props.options]);

  useEffect(() => {
    plot.current?.setData(props.data);
  }, [props.data]);

  return <div ref={box} className="chart" role="img" aria-label={props.label} />;
}
