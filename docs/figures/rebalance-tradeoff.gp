set terminal svg size 820,440 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output 'docs/figures/rebalance-tradeoff.svg'
set title 'DeepSeek-V2-Lite, Puffin prompts 1-150 -> 151-300: balance against weights moved'
set xlabel 'GB of expert weights moved, 26 layers (NVLink + NIC)'
set ylabel 'expected max / mean GPU load'
set key right top
set grid
set xrange [-1.5:45]
set yrange [0.97:*]  # room for the labels below the 1.0 points
plot 'docs/figures/rebalance-tradeoff.dat' using 2:4 with linespoints lw 2 pt 7 title 'mean over layers', \
     'docs/figures/rebalance-tradeoff.dat' using 2:5 with linespoints lw 2 pt 5 dt 2 title 'worst layer', \
     'docs/figures/rebalance-tradeoff.dat' using 2:4:1 with labels left offset 0.8,-0.7 font ',9' notitle
