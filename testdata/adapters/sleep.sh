# sleep.sh: while block-<node> exists, mark started-<node> and sleep until
# stopped (exec: SIGTERM ends it at once); else print the node.
echo "$HEGEL_NODE" >> calls.log
cat > /dev/null
if [ -e "block-$HEGEL_NODE" ]; then
	echo "working on $HEGEL_NODE"
	echo $$ > "started-$HEGEL_NODE"
	exec sleep 60
fi
echo "did $HEGEL_NODE"
