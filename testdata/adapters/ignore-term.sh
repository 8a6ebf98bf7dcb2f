# ignore-term.sh: mark started-<node>, then ignore SIGTERM (and so does
# the sleep it starts): only SIGKILL stops it.
echo "$HEGEL_NODE" >> calls.log
cat > /dev/null
trap '' TERM
sleep 60 &
echo "$$ $!" > "started-$HEGEL_NODE"
wait
wait
