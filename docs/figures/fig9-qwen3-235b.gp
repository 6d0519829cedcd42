set terminal svg size 1100,460 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output 'docs/figures/fig9-qwen3-235b.svg'
set title 'Figure 9: qwen3-235b (qwen3-235b-a22b), speedup over A2AV+GEMM, simulated a100 cluster'
set datafile missing 'NaN'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'speedup over a2av (x)'
set yrange [0:*]
set grid ytics
set key outside right top
set xtics nomirror
plot for [i=2:9] 'docs/figures/fig9-qwen3-235b.dat' using i:xtic(1) title columnheader(i)
