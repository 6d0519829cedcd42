set terminal svg size 760,440 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output 'docs/figures/scaling.svg'
set title 'zepp simulate cost, kimi-k2, 4 MiB per GPU'
set xlabel 'nodes (4 GPUs each)'
set ylabel 'CPU seconds (user + system)'
set y2label 'peak resident memory (MB)'
set logscale xy
set logscale y2
set xtics (2, 4, 8, 16, 32, 64, 128)
set ytics nomirror
set y2tics
set key left top
set grid
plot 'docs/figures/scaling.dat' index 0 using 1:3 with linespoints lw 2 pt 7 title 'a2av CPU (~nodes^{3.27})', \
     'docs/figures/scaling.dat' index 0 using 1:4 axes x1y2 with linespoints lw 1 dt 2 pt 5 title 'a2av peak MB', \
     'docs/figures/scaling.dat' index 1 using 1:3 with linespoints lw 2 pt 7 title 'zepp CPU (~nodes^{4.12})', \
     'docs/figures/scaling.dat' index 1 using 1:4 axes x1y2 with linespoints lw 1 dt 2 pt 5 title 'zepp peak MB'
