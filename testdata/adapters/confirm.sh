# confirm.sh: print a plan and ask for confirmation before the next step.
echo "$HEGEL_NODE" >> calls.log
cat > /dev/null
echo "plan for $HEGEL_NODE: delete the old cache"
echo '{"requires_confirmation": true}'
