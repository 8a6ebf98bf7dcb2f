# echo.sh: print the step, the prompt, and the earlier results.
echo "$HEGEL_NODE" >> calls.log
echo "[$HEGEL_ADAPTER] step $HEGEL_STEP of $HEGEL_TOTAL_STEPS: $HEGEL_NODE (task $HEGEL_TASK)"
echo "--- prompt"
cat
for f in "$HEGEL_RESULTS_DIR"/*; do
	[ -f "$f" ] || continue
	echo "--- result $(basename "$f")"
	cat "$f"
done
