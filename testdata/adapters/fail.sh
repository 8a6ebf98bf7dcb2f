# fail.sh: print a line, complain on stderr, exit 3.
echo "$HEGEL_NODE" >> calls.log
cat > /dev/null
echo "starting $HEGEL_NODE"
echo "the model is not available" >&2
exit 3
