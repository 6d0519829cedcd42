set terminal svg size 1100,460 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output 'docs/figures/fig10.svg'
set title 'Figure 10: weak scaling, Kimi-K2 shape (synthetic selections), speedup over A2AV+GEMM'
set datafile missing 'NaN'
set logscale x 2
set xlabel 'nodes (4 GPUs each)'
set ylabel 'speedup over a2av (x)'
set yrange [0:*]
set grid
set key outside right top
plot for [i=2:5] 'docs/figures/fig10.dat' using 1:i with linespoints lw 2 pt 7 title columnheader(i)
