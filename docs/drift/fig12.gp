set terminal svg size 1000,420 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output 'docs/drift/fig12.svg'
set title 'Figure 12 analogue: speedup over comet, 4 nodes, 64 MB per GPU'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set yrange [0:*]
set grid ytics
set key outside right top
set xtics nomirror scale 0
set ylabel 'speedup over comet'
plot for [i=2:5] 'docs/drift/fig12.dat' using i:xtic(1) title columnheader(i)
