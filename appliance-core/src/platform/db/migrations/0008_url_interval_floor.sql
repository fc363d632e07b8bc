-- URL trackers are checked at most every 30 s (issue 11): stored intervals below it are raised.
UPDATE url_trackers SET interval = 30 WHERE interval < 30;
