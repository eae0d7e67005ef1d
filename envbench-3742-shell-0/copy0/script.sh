set -e
sort input > sorted
grep -c 'ab' sorted > count || true
wc -l input > lines
od -c input | tail -n 1 > od.out
tr 'a-z' 'A-Z' < input > upper
cut -c1-3 upper | sort | uniq -c | sort -rn | head -n 5 > top
i=0
while [ "$i" -lt 100 ]; do i=$((i + 1)); done
rm -f sorted count lines od.out upper top
