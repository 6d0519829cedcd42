set terminal svg size 720,420 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output 'docs/figures/rebalance-tradeoff.svg'
set title 'DeepSeek-V2-Lite, Puffin prompts 1-150 -> 151-300: balance against weights moved'
set xlabel 'GB of expert weights moved, 26 layers (NVLink + NIC)'
set ylabel 'expected max / mean GPU load'
set key right top
set grid
set xrange [-1:46]
plot 'docs/figures/rebalance-tradeoff.dat' using 2:4 with linespoints lw 2 pt 7 title 'mean over layers', \
     'docs/figures/rebalance-tradeoff.dat' using 2:5 with linespoints lw 2 pt 5 dt 2 title 'worst layer', \
     'docs/figures/rebalance-tradeoff.dat' using 2:4:1 with labels offset 0,1 font ',9' notitle
