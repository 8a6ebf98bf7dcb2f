# json.sh files|error: end the output with a JSON line naming files, or an error.
echo "$HEGEL_NODE" >> calls.log
cat > /dev/null
case "$1" in
files)
	echo "1. api.go: add the endpoint"
	echo "2. api_test.go: test it"
	echo '{"files": ["api.go", "api_test.go"]}'
	;;
error)
	echo "half an answer"
	echo '{"error": "rate limit reached, try again in a minute"}'
	;;
esac
