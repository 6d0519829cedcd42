set terminal svg size 900,520 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output 'docs/figures/fig11.svg'
set title 'Figure 11 analogue: Qwen3-30B-A3B end to end, speedup over sglang'
set xlabel 'MiB of BF16 activations per GPU'
set ylabel 'speedup (x)'
set logscale x 2
set xtics (1, 2, 4, 8, 16)
set key below horizontal maxrows 3
set grid ytics
set xrange [0.8695652173913044:18.4]
set yrange [0.906:2.014]
plot 'docs/figures/fig11.dat' using 1:2 with linespoints lw 2 pt 7 title 'prefill TPS gain, zepp', 'docs/figures/fig11.dat' using 1:3 with linespoints lw 2 pt 5 dt 2 title 'decode TPOT speedup, zepp', 'docs/figures/fig11.dat' using 1:4 with linespoints lw 2 pt 7 title 'prefill TPS gain, zepp+swaps', 'docs/figures/fig11.dat' using 1:5 with linespoints lw 2 pt 5 dt 2 title 'decode TPOT speedup, zepp+swaps', 'docs/figures/fig11-paper.dat' using 1:2 with points pt 6 ps 2 lc 'black' title 'prefill (paper)', 'docs/figures/fig11-paper.dat' using 1:3 with points pt 4 ps 2 lc 'black' title 'decode (paper)', 1 with lines dt 3 lc 'gray' notitle
